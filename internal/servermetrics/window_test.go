package servermetrics

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 12, 2, 20, 0, 0, 0, time.UTC) //nolint:gochecknoglobals // test epoch

// historyOf folds the fixtures in, one second apart.
func historyOf(t *testing.T, names ...string) *history {
	t.Helper()
	h := &history{max: 100}
	acc := newAccumulator()
	for i, n := range names {
		p, _ := acc.add(t0.Add(time.Duration(i)*time.Second), reduceFixture(t, n, "text/plain"))
		h.add(p)
	}
	return h
}

func TestRunDeltasFromBaselineToFinal(t *testing.T) {
	h := historyOf(t, "vllm_baseline.txt", "vllm_final.txt")
	w, ok := h.window("", time.Time{}, time.Time{})
	require.True(t, ok)
	assert.Equal(t, t0, w.From)
	assert.Equal(t, t0.Add(time.Second), w.To)
	assert.InDelta(t, 1000, w.Counters[PromptTokens], 1e-9)
	assert.InDelta(t, 896, w.Counters[GenerationTokens], 1e-9)
	assert.InDelta(t, 2, w.Counters[Preemptions], 1e-9)
	assert.InDelta(t, 6, w.Counters[RequestsFinished], 1e-9)
	assert.Equal(t, map[string]float64{"stop": 5, "length": 1, "abort": 0, "error": 0}, w.FinishedByReason)
	require.NotNil(t, w.PrefixHitRatio)
	assert.InDelta(t, 0.56, *w.PrefixHitRatio, 1e-9)

	ttft := w.Histograms[TTFT]
	assert.InDelta(t, 6, ttft.Count, 1e-9)
	require.NotNil(t, ttft.Mean)
	assert.InDelta(t, 1.535/6, *ttft.Mean, 1e-9, "Δsum/Δcount: exact")

	q := w.Histograms[Queue]
	assert.InDelta(t, 5, q.Count, 1e-9)
	assert.InDelta(t, 0.962/5, *q.Mean, 1e-9, "a mean under the first 0.3 s bucket, exact all the same")
	require.NotNil(t, q.P50)
	assert.InDelta(t, 0.25, q.P50.Value, 1e-9, "rank 2.5 of 3 in (0, 0.3]")
	assert.InDelta(t, 0, q.P50.Lo, 1e-9)
	assert.InDelta(t, 0.3, *q.P50.Hi, 1e-9)
	assert.InDelta(t, 0.65, q.P90.Value, 1e-9, "rank 4.5: half-way into (0.5, 0.8]")
	assert.Equal(t, "≈ 0.65 (bucket 0.5–0.8)", q.P90.String())

	wait := w.Gauges[RequestsWaiting]
	assert.Equal(t, 2, wait.Samples)
	assert.InDelta(t, 5, wait.Max, 1e-9)
	assert.InDelta(t, 0.5, wait.AboveZero, 1e-9)
	_, ok = w.Counters["prefill"]
	assert.False(t, ok)
	assert.NotContains(t, w.Histograms, Prefill, "not exposed: unknown, not 0")
}

func TestQuantileInTheLastBucketIsALowerBound(t *testing.T) {
	d := &hist{bounds: []float64{1, 2}, counts: []float64{0, 1}, count: 4, sum: 40}
	e := quantile(d, 0.99)
	assert.Nil(t, e.Hi)
	assert.InDelta(t, 2, e.Value, 1e-9)
	assert.Equal(t, "> 2 (last bucket)", e.String())
	assert.Nil(t, histStats(&hist{bounds: []float64{1}, counts: []float64{0}}).Mean, "no observation: no mean")
}

func TestCounterResetCountsFromZero(t *testing.T) {
	h := &history{max: 100}
	acc := newAccumulator()
	for i, body := range []string{
		"# TYPE vllm:prompt_tokens_total counter\nvllm:prompt_tokens_total 100\n",
		"# TYPE vllm:prompt_tokens_total counter\nvllm:prompt_tokens_total 150\n",
		"# TYPE vllm:prompt_tokens_total counter\nvllm:prompt_tokens_total 20\n", // restarted: 20 new
		"# TYPE vllm:prompt_tokens_total counter\nvllm:prompt_tokens_total 30\n",
	} {
		p, err := parseBody([]byte(body), "text/plain")
		require.NoError(t, err)
		pt, resets := acc.add(t0.Add(time.Duration(i)*time.Second), reduce(p.families, ""))
		if i == 2 {
			assert.Equal(t, []string{PromptTokens}, resets)
		} else {
			assert.Empty(t, resets)
		}
		h.add(pt)
	}
	w, _ := h.window("", time.Time{}, time.Time{})
	assert.InDelta(t, 50+20+10, w.Counters[PromptTokens], 1e-9)
}

func TestHistogramResetCountsFromZero(t *testing.T) {
	acc := newAccumulator()
	a := &snapshot{hists: map[string]*hist{Queue: {bounds: []float64{1}, counts: []float64{5}, count: 6, sum: 6}}}
	b := &snapshot{hists: map[string]*hist{Queue: {bounds: []float64{1}, counts: []float64{1}, count: 1, sum: 0.5}}}
	h := &history{max: 10}
	p, _ := acc.add(t0, a)
	h.add(p)
	p, resets := acc.add(t0.Add(time.Second), b)
	h.add(p)
	assert.Equal(t, []string{Queue}, resets)
	w, _ := h.window("", time.Time{}, time.Time{})
	assert.InDelta(t, 1, w.Histograms[Queue].Count, 1e-9)
	require.NotNil(t, w.Histograms[Queue].Sum)
	assert.InDelta(t, 0.5, *w.Histograms[Queue].Sum, 1e-9)
}

func TestSeriesCreatedMidRunCountsFromZero(t *testing.T) {
	h := historyOf(t, "unknown.txt", "llmd_sim.txt")
	w, _ := h.window("", time.Time{}, time.Time{})
	assert.InDelta(t, 96, w.Counters[PrefixHits], 1e-9, "absent at the baseline, so created after it at 0")
}

func TestStageWindowsUseTheNearestScrapes(t *testing.T) {
	h := &history{max: 100}
	acc := newAccumulator()
	for i := range 10 {
		body := []byte("# TYPE vllm:request_success_total counter\nvllm:request_success_total{finished_reason=\"stop\"} " +
			itoa(i*i) + "\n# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting " + itoa(i) + "\n")
		p, err := parseBody(body, "text/plain")
		require.NoError(t, err)
		pt, _ := acc.add(t0.Add(time.Duration(i)*time.Second), reduce(p.families, ""))
		h.add(pt)
	}
	// A stage from 2.5 s to 6.2 s: deltas between the scrapes at 2 s and 7 s.
	w, ok := h.window("step 2", t0.Add(2500*time.Millisecond), t0.Add(6200*time.Millisecond))
	require.True(t, ok)
	assert.Equal(t, "step 2", w.Name)
	assert.Equal(t, t0.Add(2*time.Second), w.From)
	assert.Equal(t, t0.Add(7*time.Second), w.To)
	assert.InDelta(t, 49-4, w.Counters[RequestsFinished], 1e-9)
	assert.InDelta(t, 45, w.FinishedByReason["stop"], 1e-9)
	assert.Equal(t, 6, w.Scrapes)
	assert.InDelta(t, 7, w.Gauges[RequestsWaiting].Max, 1e-9)
	assert.InDelta(t, 2, w.Gauges[RequestsWaiting].Min, 1e-9)
}

func TestHistoryStaysBoundedAndDeltasStayExact(t *testing.T) {
	h := &history{max: 16}
	acc := newAccumulator()
	for i := range 1000 {
		body := []byte("# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total " + itoa(i*3) + "\n")
		p, err := parseBody(body, "text/plain")
		require.NoError(t, err)
		pt, _ := acc.add(t0.Add(time.Duration(i)*time.Second), reduce(p.families, ""))
		h.add(pt)
		require.LessOrEqual(t, len(h.points), 16)
	}
	assert.Equal(t, t0, h.points[0].at, "the baseline is never thinned out")
	assert.Equal(t, t0.Add(999*time.Second), h.points[len(h.points)-1].at)
	w, _ := h.window("", time.Time{}, time.Time{})
	assert.InDelta(t, 999*3, w.Counters[GenerationTokens], 1e-9)
	for i := 1; i < len(h.points); i++ {
		assert.True(t, h.points[i].at.After(h.points[i-1].at))
	}
}

func itoa(i int) string { return fmtFloat(float64(i)) }
