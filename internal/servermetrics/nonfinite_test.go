package servermetrics

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNonFiniteSeriesAreUnknownAndNamedOnce: vLLM's final snapshot with a
// NaN histogram _sum (TTFT, engine 0), a +Inf one (queue, engine 1), a +Inf
// gauge (waiting, engine 1) and a NaN counter (preemptions, engine 0), as
// Python's client writes them. The view encodes (a NaN once made report()
// throw "json: unsupported value: NaN" and lost the whole record), every
// figure they touch is unknown, never a number made of them, what they do
// not touch is exact, and one warning names the series.
func TestNonFiniteSeriesAreUnknownAndNamedOnce(t *testing.T) {
	ep := newEndpoint(t, fixture(t, "vllm_baseline.txt"))
	w := &warnings{}
	var means []map[string]float64
	s, err := New(Config{URL: ep.url(), Interval: time.Hour, Warn: w.add, OnScrape: func(sm Sample) { means = append(means, sm.Means) }})
	require.NoError(t, err)
	s.Start()
	ep.set(fixture(t, "vllm_nonfinite.txt"), 200, "")
	s.Stop()
	v := s.View(nil)

	b, err := json.Marshal(v)
	require.NoError(t, err, "the view must encode")
	require.True(t, json.Valid(b))
	require.NotNil(t, v.Run)

	ttft, ok := v.Run.Histograms[TTFT]
	require.True(t, ok, "the buckets and count are still good")
	assert.Nil(t, ttft.Sum, "Δsum is unknown")
	assert.Nil(t, ttft.Mean, "so is the mean")
	assert.Positive(t, ttft.Count)
	assert.NotNil(t, ttft.P50, "quantiles come from the buckets")
	assert.Nil(t, v.Run.Histograms[Queue].Mean)
	e2e := v.Run.Histograms[E2E]
	require.NotNil(t, e2e.Mean, "a histogram with finite sums keeps its mean")
	require.NotNil(t, e2e.Sum)

	_, known := v.Run.Counters[Preemptions]
	assert.False(t, known, "a counter whose final value is NaN has no delta (never 0)")
	assert.InDelta(t, 1000, v.Run.Counters[PromptTokens], 1e-9, "the other counters are exact")
	assert.Equal(t, 1, v.Run.Gauges[RequestsWaiting].Samples, "the +Inf reading is left out, the baseline's kept")

	for _, m := range means {
		for k, x := range m {
			assert.False(t, x != x, "a NaN mean reached k6: %s", k) //nolint:gocritic // NaN test
		}
		_, has := m[TTFT]
		assert.False(t, has, "the TTFT mean is unknown, not sent")
	}

	require.Len(t, w.all(), 1, "one warning: %q", w.all())
	msg := w.all()[0]
	for _, series := range []string{
		`vllm:time_to_first_token_seconds_sum{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"}`,
		`vllm:request_queue_time_seconds_sum{engine="1",model_name="meta-llama/Llama-3.1-8B-Instruct"}`,
		`vllm:num_requests_waiting{engine="1",model_name="meta-llama/Llama-3.1-8B-Instruct"}`,
		`vllm:num_preemptions_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"}`,
	} {
		assert.Contains(t, msg, series)
	}
	assert.True(t, strings.Contains(msg, "NaN") && strings.Contains(msg, "+Inf"), msg)
	assert.Contains(t, v.Warnings, msg, "the record carries it too")
}

// TestAScrapeWithANaNSumLeavesTheWindowsAcrossItExact: a NaN between two
// finite scrapes costs only the windows that end or start at it; a window
// across it is what the two finite scrapes say, as if it had not happened.
func TestAScrapeWithANaNSumLeavesTheWindowsAcrossItExact(t *testing.T) {
	run := func(names ...string) []*point {
		acc := newAccumulator()
		var pts []*point
		for i, n := range names {
			p, _ := acc.add(time.Unix(int64(i), 0), reduceFixture(t, n, ""))
			pts = append(pts, p)
		}
		return pts
	}
	window := func(pts []*point, from, to int) Window {
		h := &history{max: 16, points: pts}
		w, ok := h.window("", pts[from].at, pts[to].at)
		require.True(t, ok)
		return w
	}
	direct := window(run("vllm_baseline.txt", "vllm_final.txt"), 0, 1)
	pts := run("vllm_baseline.txt", "vllm_nonfinite.txt", "vllm_final.txt")
	across := window(pts, 0, 2)
	for _, q := range []string{TTFT, Queue} {
		require.NotNil(t, across.Histograms[q].Mean, q)
		assert.InDelta(t, *direct.Histograms[q].Mean, *across.Histograms[q].Mean, 1e-12, q)
	}
	assert.InDelta(t, direct.Counters[Preemptions], across.Counters[Preemptions], 1e-12)
	for _, w := range []Window{window(pts, 0, 1), window(pts, 1, 2)} {
		assert.Nil(t, w.Histograms[TTFT].Mean)
		_, known := w.Counters[Preemptions]
		assert.False(t, known)
	}
}
