package report

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// tracedCalls are answered calls of two categories with distinct E2Es and
// trace ids, plus what must never be listed: untraced calls and failed ones,
// both slower than any traced answer.
func tracedCalls() (obs []*Observation, slowest map[string][]string) {
	slowest = map[string][]string{}
	for i := range 60 {
		cat := []string{"short", "long"}[i%2]
		e2e := time.Duration(100+(i*37)%60*10) * time.Millisecond
		id := fmt.Sprintf("%032x", 0xabc000+i)
		obs = append(obs, &Observation{Result: &stream.Result{Start: t0.Add(time.Duration(i) * time.Second),
			End: t0.Add(time.Duration(i)*time.Second + e2e), OK: true, TTFT: measure.Of(e2e / 4), E2E: measure.Of(e2e), TPOT: measure.Of(5 * time.Millisecond)},
			Origin: record.Origin{Category: cat, TraceID: id}})
	}
	ranked := slices.Clone(obs)
	slices.SortFunc(ranked, func(a, b *Observation) int { return int(b.E2E.Or(0) - a.E2E.Or(0)) })
	for _, o := range ranked {
		if len(slowest[o.Category]) < runrecord.SlowestKept {
			slowest[o.Category] = append(slowest[o.Category], o.TraceID)
		}
	}
	for i := range 4 {
		cat := []string{"short", "long"}[i%2]
		obs = append(obs, &Observation{Result: &stream.Result{Start: t0, End: t0.Add(time.Minute), OK: true,
			TTFT: measure.Of(time.Second), E2E: measure.Of(time.Minute), TPOT: measure.Of(5 * time.Millisecond)}, Origin: record.Origin{Category: cat}}) // untraced
		obs = append(obs, &Observation{Result: &stream.Result{Start: t0, End: t0.Add(time.Minute), OK: false,
			TTFT: measure.Of(time.Second), E2E: measure.Of(time.Minute), Err: &stream.Error{Type: stream.ErrTimeoutTotal}},
			Origin: record.Origin{Category: cat, TraceID: fmt.Sprintf("%032x", 0xdead00+i)}}) // failed: no E2E to rank
	}
	return obs, slowest
}

func traceIDs(cs runrecord.SlowCalls) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.TraceID
	}
	return out
}

// TestSlowestCallsNameTheirTraceIDs: each category's record lists its k
// slowest traced answers by E2E with their TTFT, the text and HTML reports
// name them, and the merge of split instances keeps the slowest of all.
func TestSlowestCallsNameTheirTraceIDs(t *testing.T) {
	obs, slowest := tracedCalls()
	whole := NewCollector(Options{Start: t0})
	parts := []*Collector{NewCollector(Options{Start: t0}), NewCollector(Options{Start: t0})}
	for i, o := range obs {
		whole.Add(o)
		parts[i*7%3%2].Add(o)
	}
	run := whole.Snapshot()
	rec := recordThrough(t, "single.json", run, testInfo(""))
	for cat, want := range slowest {
		cr := rec.Categories[cat]
		require.Equal(t, want, traceIDs(cr.Slowest), cat)
		for _, c := range cr.Slowest {
			require.NotNil(t, c.TTFTMS)
			require.InDelta(t, c.E2EMS/4, *c.TTFTMS, 1e-6)
		}
	}

	text, page := RenderText(run, nil, nil), string(RenderHTML(run, nil, RenderOptions{}))
	require.Contains(t, text, "slowest calls by E2E")
	require.Contains(t, page, `<table id="slowest">`)
	for _, ids := range slowest {
		for _, id := range ids {
			require.Contains(t, text, id)
			require.Contains(t, page, id)
		}
	}
	require.NotContains(t, text, "dead0", "a failed call has no E2E to rank")

	recs := []*runrecord.Record{
		recordThrough(t, "0.json", parts[0].Snapshot(), testInfo("0:1/2")),
		recordThrough(t, "1.json", parts[1].Snapshot(), testInfo("1/2:1")),
	}
	merged, err := Merge(recs[1], recs[0])
	require.NoError(t, err)
	for cat, want := range slowest {
		require.Equal(t, want, traceIDs(merged.Categories[cat].Slowest), "merged "+cat)
	}
	mergedText, mergedPage := RenderRecordText(merged), string(RenderRecordHTML(merged, ""))
	for _, id := range slowest["long"] {
		require.Contains(t, mergedText, id)
		require.Contains(t, mergedPage, id)
	}
}

// TestNoSlowestTableWithoutTracing: a run without trace ids has no table
// and no key in its record.
func TestNoSlowestTableWithoutTracing(t *testing.T) {
	obs, _ := tracedCalls()
	c := NewCollector(Options{Start: t0})
	for _, o := range obs {
		o.TraceID = ""
		c.Add(o)
	}
	run := c.Snapshot()
	require.NotContains(t, RenderText(run, nil, nil), "slowest calls")
	require.NotContains(t, string(RenderHTML(run, nil, RenderOptions{})), `id="slowest"`)
	b, err := marshalRecord(run, nil, nil, RenderOptions{})
	require.NoError(t, err)
	require.NotContains(t, string(b), "slowest_calls")
}
