package report

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
)

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
	Level                 float64
	ByRate                bool
	Calls, Failed         uint64
	Duration, TTFB, Parse *sketch.Sketch // ms, answered calls
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
	if g.first.IsZero() || o.Start.Before(g.first) {
		g.first = o.Start
	}
	if o.End.After(g.last) {
		g.last = o.End
	}
	g.RequestBytes += r.RequestBytes
	if v, ok := ms(o.DispatchDelay()); ok { // late whatever the answer
		g.DispatchDelay.Add(v)
	}
	if !o.OK {
		g.Failed++
		if o.Err != nil {
			g.errors[string(o.Err.Type)]++
		}
		return
	}
	if v, ok := ms(r.Duration); ok {
		g.Duration.Add(v)
	}
	if v, ok := ms(r.TTFB); ok {
		g.TTFB.Add(v)
	}
	if v, ok := ms(o.FromDue(r.Duration)); ok {
		g.E2EFromDue.Add(v)
	}
	if v, ok := ms(r.Parse); ok {
		g.Parse.Add(v)
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

// retrievalColumns are the section's columns, in the text and the HTML.
var retrievalColumns = []string{ //nolint:gochecknoglobals // read-only table
	"op", "category", "load", "calls", "failed", "dur p50", "dur p95", "TTFB p95", "parse p50", "batch", "in tok/s",
	"late p99", "dur from due p95"}

// cells are the group's row of the section: "-" for what was not measured.
// A single run's groups and a merged record's share it.
func retrievalCells(rr *runrecord.RetrievalRecord) []string {
	load := fmt.Sprintf("%.0f VUs", rr.Load)
	if rr.ByRate {
		load = fmt.Sprintf("%.3g/s", rr.Load)
	}
	batch, tps := "-", "-"
	if rr.BatchMean != nil {
		batch = fmt.Sprintf("%.1f", *rr.BatchMean)
	}
	if rr.InputTokensPerSec != nil {
		tps = fmt.Sprintf("%.0f", *rr.InputTokensPerSec)
	}
	q := func(name string, p float64) string {
		if mr := rr.Metrics[name]; mr != nil && mr.Sketch != nil {
			return fmtMS(mr.Sketch.Quantile(p))
		}
		return "-"
	}
	return []string{rr.Op, rr.Category, load, fmt.Sprint(rr.Calls), fmt.Sprint(rr.Failed),
		q("duration", 0.5), q("duration", 0.95), q("ttfb", 0.95), q("parse", 0.5), batch, tps,
		q("dispatch_delay", 0.99), q("e2e_from_due", 0.95)}
}

// RetrievalText is the section's text: "" without such calls. A failed
// call counts in calls and failed only; the timings are the answered ones'.
// The due-time columns are "-" for calls no schedule asked for.
func RetrievalText(groups []*RetrievalGroup) string {
	return retrievalRecordText(retrievalRecords(groups))
}

// retrievalRecordText is RetrievalText of the groups' records.
func retrievalRecordText(groups []runrecord.RetrievalRecord) string {
	if len(groups) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Embeddings and rerank (non-streamed: no TTFT or gaps)\n")
	widths := []int{-7, -16, 7, 6, 6, 9, 9, 9, 9, 8, 9, 9, 16}
	writeCells(&b, widths, retrievalColumns)
	for i := range groups {
		writeCells(&b, widths, retrievalCells(&groups[i]))
		if errs := errorTypes(groups[i].Errors); errs != "" {
			fmt.Fprintf(&b, "          failures: %s\n", errs)
		}
	}
	return b.String()
}

// writeCells writes one row of a text table: each cell in its width
// (negative: left-aligned), two spaces in.
func writeCells(b *strings.Builder, widths []int, cells []string) {
	b.WriteString(" ")
	for i, c := range cells {
		fmt.Fprintf(b, " %*s", widths[i], c)
	}
	b.WriteString("\n")
}
