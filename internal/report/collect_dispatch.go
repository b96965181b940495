package report

import (
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// SetDispatch gives the run (and each client's view of it) its dispatch
// account. The schedules' dropped credits become failed calls of the run
// (error type dropped): a credit is no client's until a call takes it, so
// they count in a client's or a category's figures only when the run had
// that one alone, and in the whole run's always.
func (r *Run) SetDispatch(d *runrecord.Dispatch) {
	r.Dispatch = d
	credits, _ := d.Dropped()
	r.droppedCredits = credits
	for _, v := range r.parts {
		v.Dispatch = d
	}
}

// droppedIn is how many dropped credits count in category cat's figures.
func (r *Run) droppedIn(cat string) uint64 {
	if r.droppedCredits == 0 {
		return 0
	}
	if cat == runrecord.AllCategories {
		return r.droppedCredits
	}
	if cats := r.Categories(); len(cats) == 1 && cats[0] == cat {
		return r.droppedCredits
	}
	return 0
}

// addDropped counts n dropped credits as failed calls.
func (g *Group) addDropped(n uint64) {
	if n == 0 {
		return
	}
	g.Requests += n
	g.Failures += n
	g.Errors[string(stream.ErrDropped)] += n
}
