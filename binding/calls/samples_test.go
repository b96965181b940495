package calls

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.k6.io/k6/metrics"

	"github.com/llmstream/xk6-llmstream/binding/k6env"
	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/sample"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// A call's batch is sized as the last one of its table was: the first
// has room for every figure, the next one like it exactly what it holds
// (and the same samples), and a call with more than the last grows its
// batch to hold them all.
func TestCallBatchSizedAsTheLast(t *testing.T) {
	t.Parallel()
	reg := metrics.NewRegistry()
	m, err := (&k6env.MetricTables{}).Get(reg)
	require.NoError(t, err)
	rt := testRoute(reg, record.Origin{Name: "c", Route: routePrimary, Protocol: "openai", Model: "m",
		GapSamples: config.GapsPerEvent})
	call := func(gaps int) (*outcome, *record.Call) {
		r := &stream.Result{OK: true, Status: 200, TTFB: measure.Of(time.Millisecond), TTFT: measure.Of(2 * time.Millisecond),
			E2E: measure.Of(5 * time.Millisecond), End: time.Now()}
		for range gaps {
			r.Gaps = append(r.Gaps, 1000)
		}
		o := &outcome{Attempts: []attempt{{Route: rt, Result: r}}}
		return o, callRecord(o, callLoad{})
	}
	batch := func(gaps int) metrics.Samples {
		o, rec := call(gaps)
		return callSamples(m, o, rec)
	}
	first, second := batch(3), batch(3)
	require.Greater(t, cap(first), len(first))
	require.Equal(t, len(first), len(second))
	require.Equal(t, len(second), cap(second))
	for i := range first {
		require.Equal(t, first[i].Metric, second[i].Metric)
	}
	more := batch(9)
	require.Len(t, more, len(second)+6)
}

// With gapSamples 'sampled', a call whose gaps the cap left out sends
// their count instead of them: after a call that kept its gaps, its batch
// is still sized for what it holds, not grown.
func TestSampledCallBatchHoldsTheUnsampledCount(t *testing.T) {
	t.Parallel()
	reg := metrics.NewRegistry()
	m, err := (&k6env.MetricTables{}).Get(reg)
	require.NoError(t, err)
	rt := testRoute(reg, record.Origin{Name: "c", Route: routePrimary, Protocol: "openai", Model: "m",
		GapSamples: config.GapsSampled})
	batch := func(kept bool) metrics.Samples {
		r := &stream.Result{OK: true, Status: 200, TTFB: measure.Of(time.Millisecond), TTFT: measure.Of(2 * time.Millisecond),
			E2E: measure.Of(5 * time.Millisecond), End: time.Now(), Gaps: stream.Gaps{1000}}
		o := &outcome{Attempts: []attempt{{Route: rt, Result: r}}}
		rec := callRecord(o, callLoad{})
		rec.KeepGap = sample.KeepAll()
		if !kept {
			rec.KeepGap, rec.GapsUnsampled = sample.KeepNone(), 1
		}
		return callSamples(m, o, rec)
	}
	batch(true)
	keptAll := batch(true)
	leftOut := batch(false)
	require.Len(t, leftOut, len(keptAll), "one gap's sample, or the count of the one left out")
	require.Equal(t, len(leftOut), cap(leftOut), "sized as the last call's, with the count")
	require.Equal(t, "llm_gaps_unsampled", leftOut[len(leftOut)-1].Metric.Name)
}

// referenceSamples is a call's batch built the plain way, row by row, each
// sample with a freshly built tag set and metadata: what callSamples must
// hand k6, however it builds the batch.
func referenceSamples(t *testing.T, m *k6env.LLMMetrics, o *outcome, rec *record.Call) metrics.Samples {
	t.Helper()
	table, byRow, _ := m.Table(rec)
	var out metrics.Samples
	tagged := func(a *attempt, n int) (*metrics.TagSet, map[string]string) {
		info, r := a.Route.Info, a.Result
		key := attemptTagKey{base: info.tags.Tags, systemTags: info.systemTags, protocol: info.Protocol, name: info.Name,
			model: info.Model, route: info.Route, tagRoute: info.tagRoute, cache: r.Cache.String(), proto: r.Proto,
			failed: !r.OK, status: r.Status, attempt: n}
		if !r.OK {
			key.errorType = string(r.Err.Type)
		}
		meta := map[string]string{}
		for k, v := range info.tags.Metadata {
			meta[k] = v
		}
		if r.RequestID != "" {
			meta["request_id"] = r.RequestID
		}
		if len(meta) == 0 {
			meta = nil
		}
		return key.build(), meta
	}
	for i := range table {
		metric := byRow[i]
		if metric == nil {
			continue
		}
		add := func(a *attempt, n int) record.Emit {
			tags, meta := tagged(a, n)
			return func(at time.Time, v float64) {
				out = append(out, metrics.Sample{TimeSeries: metrics.TimeSeries{Metric: metric, Tags: tags},
					Time: at, Metadata: meta, Value: v})
			}
		}
		if table[i].PerAttempt {
			for n := range o.Attempts {
				add(&o.Attempts[n], n+1)(o.Attempts[n].Result.End, 1)
			}
			continue
		}
		table[i].Samples(rec, add(o.Final(), len(o.Attempts)))
	}
	return out
}

// A call's batch is the reference one, sample for sample (metric, tags,
// metadata, moment, value), for a short answer and for a call that fell
// back after a failed attempt, each made twice (the second with the
// client's kept tag set and a batch sized as the first).
func TestCallSamplesAreEachRowsWithItsAttemptsTags(t *testing.T) {
	t.Parallel()
	reg := metrics.NewRegistry()
	m, err := (&k6env.MetricTables{}).Get(reg)
	require.NoError(t, err)
	memo := &tagMemo{}
	route := func(name, rt string) *route {
		r := testRoute(reg, record.Origin{Name: name, Route: rt, Protocol: "openai", Model: "m-" + name, Scenario: "s",
			GapSamples: config.GapsPerEvent, RequestBytes: 90})
		r.Info.tags.SetMetadata("trace", "t1")
		r.Info.tagMemo = memo
		return r
	}
	primary, fallback := route("big", routePrimary), route("small", routeFallback)
	start := time.Unix(1_700_000_000, 0)
	answered := func() *stream.Result {
		return &stream.Result{OK: true, Status: 200, RequestID: "req-2", Proto: "HTTP/1.1", Cache: stream.CacheHit,
			TTFB: measure.Of(time.Millisecond), TTFT: measure.Of(2 * time.Millisecond), TTFTAnswer: measure.Of(2 * time.Millisecond),
			E2E: measure.Of(5 * time.Millisecond), TPOT: measure.Of(time.Millisecond), TokensPerSec: 1000, OutputTokens: 4,
			Gaps: stream.Gaps{1000, 1200, 900}, Start: start, FirstOutAt: start.Add(2 * time.Millisecond),
			LastOutAt: start.Add(4 * time.Millisecond), End: start.Add(5 * time.Millisecond)}
	}
	failed := func() *stream.Result {
		return &stream.Result{Status: 503, RequestID: "req-1", Err: &stream.Error{Type: stream.ErrHTTP5xx},
			Start: start.Add(-time.Second), End: start.Add(-time.Second / 2)}
	}
	calls := map[string]func() *outcome{
		"short answer": func() *outcome { return &outcome{Attempts: []attempt{{Route: primary, Result: answered()}}} },
		"fell back": func() *outcome {
			return &outcome{Attempts: []attempt{{Route: primary, Result: failed()}, {Route: fallback, Result: answered()}}}
		},
	}
	for name, call := range calls {
		for range 2 {
			o := call()
			rec := callRecord(o, callLoad{active: 1, vus: 1})
			got, want := callSamples(m, o, rec), referenceSamples(t, m, o, rec)
			require.Len(t, got, len(want), name)
			for i := range want {
				g, w := got[i], want[i]
				require.Equal(t, w.Metric.Name, g.Metric.Name, "%s: sample %d", name, i)
				require.Equal(t, w.Tags.Map(), g.Tags.Map(), "%s: %s's tags", name, w.Metric.Name)
				require.Equal(t, w.Metadata, g.Metadata, "%s: %s's metadata", name, w.Metric.Name)
				require.True(t, w.Time.Equal(g.Time), "%s: %s at %v, want %v", name, w.Metric.Name, g.Time, w.Time)
				require.Equal(t, w.Value, g.Value, "%s: %s", name, w.Metric.Name) //nolint:testifylint // the very value
			}
		}
	}
}
