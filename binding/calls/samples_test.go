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
