package report

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// The report's sections beside the chat calls' figures: the non-streamed
// embed and rerank calls (collect_retrieval.go) and the chat calls' TTFT by the
// pictures in their prompts (collect_images.go). Their collectors are fed live
// beside the chat collector; the binding hands their groups to the frozen
// run, so that the text, the HTML and the run record all carry them from
// the same groups.

// The report's section of the non-streamed calls (client.embed,
// client.rerank): per operation, category and load stage, how many calls,
// how long they took (TTFB, whole answer), how big their batches were and
// how fast their input went. They are kept apart from the chat calls'
// groups: a call without a first token or gaps would otherwise count as an
// answered stream with no TTFT, and the diagnosis would judge it as one.

// RetrievalCollector gathers the non-streamed calls. It leaves out what
// the chat collector leaves out (warm-up, setup, scenarios, tags).
type RetrievalCollector struct {
	mu      sync.Mutex
	exclude *excluder
	groups  map[retrievalKey]*RetrievalGroup
}

type retrievalKey struct {
	Op, Category string
	Level        int
}

// RetrievalGroup is one operation's calls of one category at one load stage.
type RetrievalGroup struct {
	Op, Category string
	// Level is the mean load the calls started under (VUs, or iterations/s
	// when ByRate).
	Level         float64
	ByRate        bool
	Calls, Failed uint64
	// Duration (answered calls: a whole answer's), TTFB and Parse (every
	// call that measured them), in ms.
	Duration, TTFB, Parse *sketch.Sketch
	// DispatchDelay (every call) and E2EFromDue (answered calls: the whole
	// answer counted from the due time) are the due-time figures of the
	// calls a schedule asked for; empty for closed-model calls.
	DispatchDelay, E2EFromDue *sketch.Sketch
	Items, InputTokens        int64  // answered calls' batch items and input tokens (known counts only)
	TokensKnown               uint64 // answered calls whose input tokens were counted
	RequestBytes              int64
	first, last               time.Time
	levelSum                  float64
	errors                    map[string]uint64
}

// NewRetrievalCollector makes an empty collector leaving out what opt says.
func NewRetrievalCollector(opt Options) *RetrievalCollector {
	return &RetrievalCollector{exclude: newExcluder(opt.Exclude), groups: map[retrievalKey]*RetrievalGroup{}}
}

// Add records one finished embed or rerank call; other calls are ignored.
func (c *RetrievalCollector) Add(o *Observation) {
	if o == nil || o.Retrieval == nil {
		return
	}
	r := o.Retrieval
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.exclude.leaveOut(o) {
		return
	}
	key := retrievalKey{Op: r.Op, Category: category(o), Level: levelClass(o)}
	g := c.groups[key]
	if g == nil {
		g = &RetrievalGroup{Op: r.Op, Category: key.Category, ByRate: o.Rate > 0, errors: map[string]uint64{},
			Duration: sketch.New(sketch.FineAlpha), TTFB: sketch.New(sketch.FineAlpha), Parse: sketch.New(sketch.FineAlpha),
			DispatchDelay: sketch.New(sketch.FineAlpha), E2EFromDue: sketch.New(sketch.FineAlpha)}
		c.groups[key] = g
	}
	g.Calls++
	g.levelSum += level(o)
	if cutByStop(o) {
		// Cut in flight by the test's stop, as a chat call can be: a failed
		// call of its own type, and nothing of it is a figure (its TTFB,
		// lateness and span describe when the test stopped, not the service).
		g.Failed++
		g.errors[string(stream.ErrCanceled)]++
		return
	}
	if g.first.IsZero() || o.Start.Before(g.first) {
		g.first = o.Start
	}
	if o.End.After(g.last) {
		g.last = o.End
	}
	g.RequestBytes += r.RequestBytes
	if v, ok := o.DispatchDelay().MS(); ok { // late whatever the answer
		g.DispatchDelay.Add(v)
	}
	// What a failed call measured counts, as its figure rows say (record:
	// ttfb, clientParseTime); its duration is no answer's.
	if v, ok := r.TTFB.MS(); ok {
		g.TTFB.Add(v)
	}
	if v, ok := r.Parse.MS(); ok {
		g.Parse.Add(v)
	}
	if !o.OK {
		g.Failed++
		if o.Err != nil {
			g.errors[string(o.Err.Type)]++
		}
		return
	}
	if v, ok := r.Duration.MS(); ok {
		g.Duration.Add(v)
	}
	if v, ok := o.FromDue(r.Duration).MS(); ok {
		g.E2EFromDue.Add(v)
	}
	g.Items += int64(r.Items)
	if r.TokenSource != "" {
		g.InputTokens += r.InputTokens
		g.TokensKnown++
	}
}

// Groups is every group, by operation, category and load.
func (c *RetrievalCollector) Groups() []*RetrievalGroup {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*RetrievalGroup, 0, len(c.groups))
	for _, g := range c.groups {
		cp := *g
		cp.Level = g.levelSum / float64(g.Calls)
		out = append(out, &cp)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Op != b.Op {
			return a.Op < b.Op
		}
		if a.Category != b.Category {
			return a.Category < b.Category
		}
		return a.Level < b.Level
	})
	return out
}

// span is the group's wall time, first start to last end.
func (g *RetrievalGroup) span() time.Duration { return g.last.Sub(g.first) }

// InputTokensPerSec is the group's input tokens over its span (0 when the
// tokens were not counted or the span is empty).
func (g *RetrievalGroup) InputTokensPerSec() float64 {
	if g.TokensKnown == 0 || g.span() <= 0 {
		return 0
	}
	return float64(g.InputTokens) / g.span().Seconds()
}

// ErrorTypes lists the failures by type, "type×n", sorted.
func (g *RetrievalGroup) ErrorTypes() string { return errorTypes(g.errors) }

func errorTypes(errs map[string]uint64) string {
	parts := make([]string, 0, len(errs))
	for _, t := range sortedKeys(errs) {
		parts = append(parts, fmt.Sprintf("%s×%d", t, errs[t]))
	}
	return strings.Join(parts, " ")
}
