package report

import (
	"time"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// Run is a frozen copy of a Collector's statistics, what the diagnosis and
// the renderers read.
type Run struct {
	opt         Options
	groups      map[groupKey]*Group
	levels      map[int]levelInfo
	samples     map[string][]Sample
	seen        map[string]uint64
	First, Last time.Time
	Timeline    *Timeline
	// Excluded is what the collector left out (warm-up, scenarios, tags, setup/teardown).
	Excluded runrecord.Exclusions
	// Dispatch is what the test offered and did not send on time (nil when
	// the binding had nothing to say): schedules and k6's dropped iterations.
	Dispatch *runrecord.Dispatch
	// droppedCredits are the schedules' credits never sent, counted as
	// failed calls (SetDispatch); 0 in a client's view of several.
	droppedCredits uint64
	// Capacity is a capacity search's answer (nil without a search).
	Capacity *runrecord.Capacity
	// Precision is a precision gate's verdict (nil without a gate).
	Precision *runrecord.Precision
	// Retrieval and Images are the sections beside the chat figures
	// (collect_sections.go): the embed and rerank calls, and TTFT by the prompt's
	// images. Nil until the binding sets them.
	Retrieval []*RetrievalGroup
	Images    []*ImageGroup
	// Turns and Jobs are the live conversations' section
	// (collect_conversations.go): TTFT by turn and the jobs' figures.
	Turns []*TurnGroup
	Jobs  []*JobGroup
	// jobLevels are the jobs by the load class of their first call (collect_job_stages.go).
	jobLevels map[int][]*JobGroup
	parts     map[string]*Run // each client alone, when the run had several
	client    string          // the client of this view ("" for a whole run)
	pairs     []runrecord.PairedComparison
	// interrupted says the test was stopped before its planned end (nil
	// when it ran to it): the binding knows when and why.
	interrupted *runrecord.Interruption
}

// SetMinStage changes how long a load level must hold to be a stage (the
// MinStage option) for this frozen run and each client's view of it: the
// stages are found when read, so report() can still choose it.
func (r *Run) SetMinStage(d time.Duration) {
	r.opt.MinStage = d
	for _, v := range r.parts {
		v.opt.MinStage = d
	}
}

// Clients lists the clients (Client name option) seen, sorted.
func (r *Run) Clients() []string { return r.distinct(func(k groupKey) string { return k.Client }) }

// Client is the run as one client saw it: every figure, stage, wave and rule
// of that client alone. With a single client it is the run itself.
func (r *Run) Client(name string) *Run {
	if v := r.parts[name]; v != nil {
		return v
	}
	return r
}

// PerClient says whether the run had several clients, so that every table and
// rule must be read per client.
func (r *Run) PerClient() bool { return len(r.parts) > 1 }

// ClientName is the client of a per-client view ("" for a whole run).
func (r *Run) ClientName() string { return r.client }

// Duration is the wall time from the first call start to the last call end.
func (r *Run) Duration() time.Duration {
	if r.First.IsZero() || r.Last.Before(r.First) {
		return 0
	}
	return r.Last.Sub(r.First)
}

// Categories lists the categories seen, sorted.
func (r *Run) Categories() []string { return r.distinct(func(k groupKey) string { return k.Category }) }

// Models lists the models seen, sorted.
func (r *Run) Models() []string { return r.distinct(func(k groupKey) string { return k.Model }) }

// distinct lists one field of the group keys, sorted, without repeats.
func (r *Run) distinct(field func(groupKey) string) []string {
	set := map[string]bool{}
	for k := range r.groups {
		set[field(k)] = true
	}
	return sortedKeys(set)
}

// Category merges every model and stage of one category; AllCategories
// merges everything. The schedules' dropped credits count as failed calls
// where they belong (droppedIn).
func (r *Run) Category(name string) *Group {
	g := newGroup()
	for k, v := range r.groups {
		if name == runrecord.AllCategories || k.Category == name {
			g.merge(v)
		}
	}
	g.addDropped(r.droppedIn(name))
	return g
}

// Samples returns the reservoir of a category (AllCategories: every category's, concatenated).
func (r *Run) Samples(category string) []Sample {
	if category != runrecord.AllCategories {
		return r.samples[category]
	}
	var all []Sample
	for _, k := range sortedKeys(r.samples) {
		all = append(all, r.samples[k]...)
	}
	return all
}

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

// SetSections gives the run its embed and rerank groups and its groups of
// TTFT by images.
func (r *Run) SetSections(retrieval []*RetrievalGroup, images []*ImageGroup) {
	r.Retrieval, r.Images = retrieval, images
}

// SetInterruption marks the run (and each client's view of it) as stopped
// before its planned end; nil when it ran to it.
func (r *Run) SetInterruption(i *runrecord.Interruption) {
	r.interrupted = i
	for _, v := range r.parts {
		v.interrupted = i
	}
}

// Interruption is how the run was stopped before its planned end, with the
// calls the stop cut in flight counted from its failures (nil when it ran
// to its end).
func (r *Run) Interruption() *runrecord.Interruption {
	if r.interrupted == nil {
		return nil
	}
	i := *r.interrupted
	i.Canceled = r.Category(runrecord.AllCategories).Errors[string(stream.ErrCanceled)]
	for _, g := range r.Retrieval { // embed and rerank calls are in their own section, not the categories
		i.Canceled += g.errors[string(stream.ErrCanceled)]
	}
	return &i
}

// SetCapacity gives the run (and each client's view of it) the search's answer.
func (r *Run) SetCapacity(c *runrecord.Capacity) {
	r.Capacity = c
	for _, v := range r.parts {
		v.Capacity = c
	}
}

// SetPrecision gives the run (and each client's view of it) the precision
// gate's verdict.
func (r *Run) SetPrecision(p *runrecord.Precision) {
	r.Precision = p
	for _, v := range r.parts {
		v.Precision = p
	}
}

// SetConversations gives the run its conversations' groups.
func (r *Run) SetConversations(c Conversations) {
	r.Turns, r.Jobs, r.jobLevels = c.Turns, c.Jobs, c.ByLevel
}
