package sim

import (
	"bytes"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	pmodel "github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func scrapeFamilies(t *testing.T, s *testSim) map[string]*dto.MetricFamily {
	t.Helper()
	_, body := s.get("/metrics")
	p := expfmt.NewTextParser(pmodel.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	require.NoError(t, err)
	return fams
}

func label(m *dto.Metric, name string) string {
	for _, lp := range m.GetLabel() {
		if lp.GetName() == name {
			return lp.GetValue()
		}
	}
	return ""
}

// TestVLLMExpositionMatchesTheTrace: llm-sim's vLLM families carry vLLM's
// names, labels and buckets, and their values add up to the ground-truth
// trace, request for request.
func TestVLLMExpositionMatchesTheTrace(t *testing.T) {
	small, err := NewModel("sim-small", "small") // 4 slots: a queue forms
	require.NoError(t, err)
	s := newTestSim(t, small)
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			extra := `"stream":true`
			if i%3 == 0 {
				extra = `"stream":false`
			}
			resp := s.post("/v1/chat/completions", chatBody(strings.Repeat("hello there ", 20+i), 8, extra))
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			assert.Equal(t, http.StatusOK, resp.StatusCode)
		}()
	}
	wg.Wait()
	recs := s.trace.recordsN(t, 12)

	fams := scrapeFamilies(t, s)
	for _, name := range []string{
		"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc",
		"vllm:num_preemptions_total", "vllm:prompt_tokens_total", "vllm:generation_tokens_total",
		"vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total", "vllm:request_success_total",
		"vllm:time_to_first_token_seconds", "vllm:e2e_request_latency_seconds", "vllm:request_queue_time_seconds",
		"vllm:request_inference_time_seconds", "vllm:request_prefill_time_seconds", "vllm:request_decode_time_seconds",
	} {
		f := fams[name]
		require.NotNil(t, f, name)
		for _, m := range f.GetMetric() {
			assert.Equal(t, "sim-small", label(m, "model_name"), name)
			assert.Equal(t, "0", label(m, "engine"), name)
		}
	}
	assert.Equal(t, dto.MetricType_COUNTER, fams["vllm:prompt_tokens_total"].GetType())

	var prompt, gen, queue, prefill float64
	var queued, stops int
	for _, r := range recs {
		prompt += float64(r.PromptTokens)
		gen += float64(r.CompletionTokens)
		if r.AdmittedNS > 0 {
			queue += float64(r.AdmittedNS-r.EnqueuedNS) / 1e9
			queued++
		}
		if r.PrefillEndNS > 0 {
			prefill += float64(r.PrefillEndNS-r.AdmittedNS) / 1e9 // no TTFT fault: the prefill's end is the first token
		}
		if r.Outcome == OutcomeOK {
			stops++
		}
	}
	assert.InDelta(t, prompt, fams["vllm:prompt_tokens_total"].GetMetric()[0].GetCounter().GetValue(), 0)
	assert.InDelta(t, gen, fams["vllm:generation_tokens_total"].GetMetric()[0].GetCounter().GetValue(), 0)
	reasons := map[string]float64{}
	for _, m := range fams["vllm:request_success_total"].GetMetric() {
		reasons[label(m, "finished_reason")] = m.GetCounter().GetValue()
	}
	assert.Equal(t, map[string]float64{"stop": 0, "length": float64(stops), "abort": 0, "error": 0}, reasons, "max_tokens 8, exact lengths: all 'length'")

	q := fams["vllm:request_queue_time_seconds"].GetMetric()[0].GetHistogram()
	assert.Equal(t, uint64(queued), q.GetSampleCount())
	assert.InDelta(t, queue, q.GetSampleSum(), 1e-6, "the queue histogram's sum is the trace's queue times")
	assert.Positive(t, queue, "12 requests on 4 slots queue")
	pf := fams["vllm:request_prefill_time_seconds"].GetMetric()[0].GetHistogram()
	assert.InDelta(t, prefill, pf.GetSampleSum(), 1e-6)

	for _, name := range []string{"vllm:time_to_first_token_seconds", "vllm:request_queue_time_seconds"} {
		h := fams[name].GetMetric()[0].GetHistogram()
		var prev uint64
		for _, b := range h.GetBucket() {
			assert.GreaterOrEqual(t, b.GetCumulativeCount(), prev, name)
			prev = b.GetCumulativeCount()
		}
		last := h.GetBucket()[len(h.GetBucket())-1]
		assert.True(t, math.IsInf(last.GetUpperBound(), 1))
		assert.Equal(t, h.GetSampleCount(), last.GetCumulativeCount())
	}
	ttft := fams["vllm:time_to_first_token_seconds"].GetMetric()[0].GetHistogram()
	assert.InDelta(t, 0.001, ttft.GetBucket()[0].GetUpperBound(), 0, "vLLM's TTFT buckets start at 1 ms")
	assert.InDelta(t, 0.3, q.GetBucket()[0].GetUpperBound(), 0, "vLLM's request-latency buckets start at 0.3 s")
	assert.Len(t, q.GetBucket(), 22, "21 bounds and +Inf")

	kv := fams["vllm:kv_cache_usage_perc"].GetMetric()[0].GetGauge().GetValue()
	assert.InDelta(t, 0, kv, 0, "nothing runs once all answered")
	assert.InDelta(t, 0, fams["vllm:num_preemptions_total"].GetMetric()[0].GetCounter().GetValue(), 0, "llm-sim never preempts")
}

func TestKVUsageWhileRequestsRun(t *testing.T) {
	eng := newEngine("m", ModelProfile{MaxNumSeqs: 2, MaxQueue: -1, TokensPerStep: 1, DecodeBaseMs: 1000,
		PrefixCache: true, CacheBlockTokens: 16, CacheCapacityBlks: 10}, RealClock{})
	eng.start()
	defer eng.close()
	for range 3 {
		_, err := eng.submit(seqSpec{PromptTokens: 40, OutputTokens: 100, FinishReason: "length", Faults: noFaults()})
		require.NoError(t, err)
	}
	snap := eng.snapshot()
	for i := 0; i < 200 && snap.running < 2; i++ {
		time.Sleep(10 * time.Millisecond)
		snap = eng.snapshot()
	}
	require.Equal(t, 2, snap.running)
	assert.GreaterOrEqual(t, snap.kvBlocks, 2*3, "40 prompt tokens: 3 blocks of 16 each")
	assert.Equal(t, 10, snap.kvCapacity)
}

func TestNoKVCapacityMeansNoKVUsageSeries(t *testing.T) {
	slow, err := NewModel("s", "slow") // no prefix cache: no KV capacity modelled
	require.NoError(t, err)
	s := newTestSim(t, slow)
	fams := scrapeFamilies(t, s)
	assert.Nil(t, fams["vllm:kv_cache_usage_perc"], "unknown, not 0")
	require.NotNil(t, fams["vllm:num_requests_waiting"])
}
