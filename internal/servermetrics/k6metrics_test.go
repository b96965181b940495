package servermetrics

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What a scrape hands k6 is what moved since the scrape before it: over two
// scrapes, the run's own deltas and exact means.
func TestSampleCarriesTheIntervalsDeltasAndMeans(t *testing.T) {
	ep := newEndpoint(t, fixture(t, "vllm_baseline.txt"))
	var mu sync.Mutex
	var got []Sample
	s, err := New(Config{URL: ep.url(), Interval: time.Hour, OnScrape: func(x Sample) { mu.Lock(); got = append(got, x); mu.Unlock() }})
	require.NoError(t, err)
	s.Start()
	ep.set(fixture(t, "vllm_final.txt"), 200, "")
	s.Stop()
	v := s.View(nil)
	require.Len(t, got, 2)
	assert.Nil(t, got[0].Counters, "the first scrape has nothing to subtract")
	assert.Nil(t, got[0].Means)
	require.NotNil(t, v.Run)
	assert.Equal(t, v.Run.Counters, got[1].Counters)
	for q, h := range v.Run.Histograms {
		if h.Mean == nil {
			assert.NotContains(t, got[1].Means, q)
			continue
		}
		assert.InDelta(t, *h.Mean, got[1].Means[q], 1e-12, q)
	}

	byName := map[string]Metric{}
	for _, m := range Metrics {
		byName[m.Name] = m
	}
	w, ok := byName["llm_server_requests_waiting"].Value(got[1])
	assert.True(t, ok)
	assert.InDelta(t, 5, w, 1e-9)
	q, ok := byName["llm_server_queue_mean"].Value(got[1])
	assert.True(t, ok)
	assert.InDelta(t, *v.Run.Histograms[Queue].Mean*1e3, q, 1e-9, "sent in ms")
	_, ok = byName["llm_server_queue_mean"].Value(got[0])
	assert.False(t, ok, "no interval yet: no sample, not 0")
	_, ok = byName["llm_server_kv_cache_usage"].Value(Sample{Gauges: map[string]float64{}})
	assert.False(t, ok, "a gauge the endpoint does not expose: no sample")
}

// An exporter no table knows: one warning naming the option, and its gauges
// still listed.
func TestUnknownEngineWarnsOnce(t *testing.T) {
	ep := newEndpoint(t, fixture(t, "unknown.txt"))
	w := &warnings{}
	s, err := New(Config{URL: ep.url(), Interval: time.Hour, Warn: w.add})
	require.NoError(t, err)
	s.Start()
	s.Stop()
	msgs := w.all()
	require.Len(t, msgs, 1)
	assert.True(t, strings.HasPrefix(msgs[0], "serverMetrics "+ep.url()+": no family of a known engine"), msgs[0])
	v := s.View(nil)
	assert.Equal(t, EngineUnknown, v.Engine)
	require.NotNil(t, v.Run)
	assert.NotEmpty(t, v.Run.OtherGauges)
}

// Every llm_server_* name is distinct and says its kind.
func TestMetricNames(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range Metrics {
		assert.True(t, strings.HasPrefix(m.Name, "llm_server_"), m.Name)
		assert.False(t, seen[m.Name], m.Name)
		seen[m.Name] = true
	}
}

// The acceptance metrics are one scrape interval's ratios, and absent when
// the interval drafted nothing (unknown, never 0).
func TestSpecDecodeMetrics(t *testing.T) {
	t.Parallel()
	byName := map[string]Metric{}
	for _, m := range Metrics {
		byName[m.Name] = m
	}
	x := Sample{Counters: map[string]float64{SpecDrafts: 10, SpecDraftTokens: 30, SpecAcceptedTokens: 18}}
	v, ok := byName["llm_server_spec_acceptance"].Value(x)
	assert.True(t, ok)
	assert.InDelta(t, 0.6, v, 1e-12)
	v, ok = byName["llm_server_spec_acceptance_length"].Value(x)
	assert.True(t, ok)
	assert.InDelta(t, 2.8, v, 1e-12)
	_, ok = byName["llm_server_spec_acceptance"].Value(Sample{Counters: map[string]float64{SpecDraftTokens: 0, SpecAcceptedTokens: 0}})
	assert.False(t, ok)
}
