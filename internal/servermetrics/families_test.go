package servermetrics

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVLLMSumsEnginesAndReadsTotals(t *testing.T) {
	s := reduceFixture(t, "vllm_final.txt", "text/plain; version=0.0.4")
	assert.Equal(t, EngineVLLM, s.engine)
	assert.InDelta(t, 5, s.gauges[RequestsWaiting], 1e-9, "4 + 1 over engines 0 and 1")
	assert.InDelta(t, 5, s.gauges[RequestsRunning], 1e-9)
	assert.InDelta(t, 0.5, s.gauges[KVCacheUsage], 1e-9, "the fullest engine, not a sum past 1")
	assert.InDelta(t, 2200, s.counters[PromptTokens], 1e-9)
	assert.Equal(t, "vllm:prompt_tokens_total", s.sources[PromptTokens])
	assert.InDelta(t, 3, s.counters[Preemptions], 1e-9)
	assert.InDelta(t, 9, s.reasons["stop"], 1e-9)
	assert.InDelta(t, 1, s.reasons["length"], 1e-9)
	assert.Contains(t, s.reasons, "abort", "a reason exposed at 0 is known to be 0")
	require.Contains(t, s.hists, TTFT)
	assert.InDelta(t, 10, s.hists[TTFT].count, 1e-9)
	_, isCounter := s.counters["iteration_tokens"]
	assert.False(t, isCounter)
	assert.NotContains(t, s.hists, Prefill, "not in the fixture: unknown")
}

func TestOldVLLMNamesAreFallbacksAndAbsentCountersStayUnknown(t *testing.T) {
	s := reduceFixture(t, "vllm_old.txt", "text/plain")
	assert.InDelta(t, 0.42, s.gauges[KVCacheUsage], 1e-9)
	assert.Equal(t, "vllm:gpu_cache_usage_perc", s.sources[KVCacheUsage])
	assert.Equal(t, "vllm:time_per_output_token_seconds", s.sources[ITL])
	_, ok := s.counters[PrefixHits]
	assert.False(t, ok, "V0 has only a hit-rate gauge: the per-run ratio is unknown, not 0")
	_, ok = s.counters[RequestsFinished]
	assert.False(t, ok)
}

func TestGoExporterWithoutTotalAndFinishReasonSpelling(t *testing.T) {
	s := reduceFixture(t, "llmd_sim.txt", "text/plain")
	assert.InDelta(t, 96, s.counters[PrefixHits], 1e-9)
	assert.Equal(t, "vllm:prefix_cache_hits", s.sources[PrefixHits])
	assert.InDelta(t, 128, s.counters[PrefixQueries], 1e-9)
	assert.InDelta(t, 5, s.reasons["stop"], 1e-9)
	assert.InDelta(t, 7, s.counters[RequestsFinished], 1e-9)
}

func TestSGLang(t *testing.T) {
	s := reduceFixture(t, "sglang.txt", "text/plain")
	assert.Equal(t, EngineSGLang, s.engine)
	assert.InDelta(t, 3, s.gauges[RequestsWaiting], 1e-9)
	assert.InDelta(t, 7, s.gauges[RequestsRunning], 1e-9)
	assert.InDelta(t, 0.93, s.gauges[KVCacheUsage], 1e-9)
	assert.InDelta(t, 8000, s.counters[PrefixQueries], 1e-9, "SGLang's ratio is cached/prompt tokens")
	assert.InDelta(t, 2000, s.counters[PrefixHits], 1e-9)
	assert.InDelta(t, 40, s.counters[RequestsFinished], 1e-9)
	assert.InDelta(t, 40, s.hists[Queue].count, 1e-9)
	assert.Equal(t, []float64{0, 0.1, 0.2}, s.hists[Queue].bounds)
}

func TestTGIReadsTokensFromLengthHistogramsAndSkipsSummaries(t *testing.T) {
	s := reduceFixture(t, "tgi.txt", "text/plain")
	assert.Equal(t, EngineTGI, s.engine)
	assert.InDelta(t, 2, s.gauges[RequestsWaiting], 1e-9)
	assert.InDelta(t, 8, s.gauges[RequestsRunning], 1e-9)
	assert.InDelta(t, 11, s.counters[RequestsFinished], 1e-9, "a Rust exporter's counter without _total")
	assert.InDelta(t, 2650, s.counters[PromptTokens], 1e-9)
	assert.Equal(t, "tgi_request_input_length_sum", s.sources[PromptTokens])
	assert.InDelta(t, 1408, s.counters[GenerationTokens], 1e-9)
	assert.NotContains(t, s.hists, ITL, "TGI's per-token time here is a summary: lifetime quantiles, skipped")
	assert.Contains(t, s.skipped, "tgi_request_mean_time_per_token_duration (summary: lifetime quantiles)")
	_, ok := s.gauges[KVCacheUsage]
	assert.False(t, ok)
}

func TestLlamaCppSkipsResetOnScrapeGauges(t *testing.T) {
	s := reduceFixture(t, "llamacpp.txt", "text/plain")
	assert.Equal(t, EngineLlamaCpp, s.engine)
	assert.InDelta(t, 1, s.gauges[RequestsWaiting], 1e-9)
	assert.InDelta(t, 2, s.gauges[RequestsRunning], 1e-9)
	assert.InDelta(t, 1500, s.counters[PromptTokens], 1e-9)
	assert.InDelta(t, 640, s.counters[GenerationTokens], 1e-9)
	assert.Contains(t, s.skipped, "llamacpp:predicted_tokens_seconds (reset at every scrape: rates come from counter deltas)")
	assert.Empty(t, s.hists, "llama.cpp has no histograms")
	_, ok := s.counters[RequestsFinished]
	assert.False(t, ok, "llama.cpp counts no finished requests: unknown")
}

func TestTEI(t *testing.T) {
	s := reduceFixture(t, "tei.txt", "text/plain")
	assert.Equal(t, EngineTEI, s.engine)
	assert.InDelta(t, 39, s.counters[RequestsFinished], 1e-9, "summed over the method label")
	assert.InDelta(t, 4, s.gauges[RequestsRunning], 1e-9)
	assert.InDelta(t, 0.21, s.hists[Queue].sum, 1e-9)
}

func TestOpenMetrics(t *testing.T) {
	p, err := parseBody(fixture(t, "openmetrics.txt"), "application/openmetrics-text; version=1.0.0; charset=utf-8")
	require.NoError(t, err)
	assert.True(t, p.openMetrics)
	assert.Zero(t, p.skipped, "timestamps, exemplars, UNIT, info and gaugehistogram are OpenMetrics, not garbage")
	s := reduce(p.families, "")
	assert.InDelta(t, 6, s.gauges[RequestsWaiting], 1e-9)
	assert.InDelta(t, 512, s.counters[PromptTokens], 1e-9)
	assert.Equal(t, "vllm:prompt_tokens_total", s.sources[PromptTokens])
	assert.InDelta(t, 4, s.hists[Queue].count, 1e-9)
	assert.InDelta(t, 3, s.hists[Queue].counts[0], 1e-9, "the exemplar after the bucket's value is dropped")
	// Recognised by its "# EOF" even when served as text/plain.
	p, err = parseBody(fixture(t, "openmetrics.txt"), "text/plain")
	require.NoError(t, err)
	assert.True(t, p.openMetrics)
}

func TestUnknownExporterListsItsGauges(t *testing.T) {
	s := reduceFixture(t, "unknown.txt", "text/plain")
	assert.Equal(t, EngineUnknown, s.engine)
	assert.Empty(t, s.gauges)
	assert.Equal(t, map[string]float64{"myserver_active_streams": 7, "myserver_batch_fill": 0.5}, s.other)
	assert.Contains(t, s.skipped, "myserver_latency_seconds (summary: lifetime quantiles)")
}

func TestModelFilterKeepsOneModel(t *testing.T) {
	body := []byte("# TYPE vllm:num_requests_waiting gauge\n" +
		"vllm:num_requests_waiting{model_name=\"a\"} 2\nvllm:num_requests_waiting{model_name=\"b\"} 5\n")
	p, err := parseBody(body, "text/plain")
	require.NoError(t, err)
	assert.InDelta(t, 7, reduce(p.families, "").gauges[RequestsWaiting], 1e-9)
	assert.InDelta(t, 5, reduce(p.families, "b").gauges[RequestsWaiting], 1e-9)
	_, ok := reduce(p.families, "c").gauges[RequestsWaiting]
	assert.False(t, ok, "no series of model c: unknown")
}

func TestNaNGaugeIsUnknown(t *testing.T) {
	p, err := parseBody([]byte("# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc NaN\n"), "text/plain")
	require.NoError(t, err)
	_, ok := reduce(p.families, "").gauges[KVCacheUsage]
	assert.False(t, ok)
}
