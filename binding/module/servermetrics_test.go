package module

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.k6.io/k6/metrics"
)

// vllmExposition is a small vLLM /metrics page whose finished-request counter
// is what the test says, as a real server's counts its requests.
func vllmExposition(finished int64, waiting int) string {
	return fmt.Sprintf(`# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="m"} %d
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 1
# TYPE vllm:request_success_total counter
vllm:request_success_total{engine="0",finished_reason="stop",model_name="m"} %d
# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{engine="0",model_name="m"} %d
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{engine="0",model_name="m",le="0.001"} 0
vllm:time_to_first_token_seconds_bucket{engine="0",model_name="m",le="0.1"} %d
vllm:time_to_first_token_seconds_bucket{engine="0",model_name="m",le="+Inf"} %d
vllm:time_to_first_token_seconds_sum{engine="0",model_name="m"} %g
vllm:time_to_first_token_seconds_count{engine="0",model_name="m"} %d
`, waiting, finished, 12*finished, finished, finished, 0.002*float64(finished), finished)
}

// The serverMetrics option in a script: the scraper reads the endpoint beside
// the calls, llm_server_* samples reach k6 tagged with the client's name and
// the engine, and the report and the run record carry the server's view —
// without the endpoint's credential anywhere.
func TestServerMetricsOptionFeedsK6AndTheReport(t *testing.T) {
	t.Parallel()
	llmSrv, _ := streamServer(t, 0, 0, []string{"a", "b"})
	var finished atomic.Int64
	const secret = "Bearer metrics-secret-123"
	metricsSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != secret {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = fmt.Fprint(w, vllmExposition(finished.Load(), 2))
	}))
	t.Cleanup(metricsSrv.Close)

	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, name: 'svc',
		serverMetrics: {url: %q, interval: '50ms', headers: {Authorization: %q}}});`, llmSrv.URL, metricsSrv.URL+"/metrics", secret))
	vu.root.server.StartAll() // what k6's test-start event does: the baseline first
	for range 3 {
		res := vu.chat(`{messages: [{role: 'user', content: 'hi'}]}`)
		require.Equal(t, true, res["ok"])
		finished.Add(1) // the server counts a request once it has answered it
	}
	require.Eventually(t, func() bool {
		return len(vu.drain()["llm_server_requests_waiting"]) > 0
	}, 5*time.Second, 20*time.Millisecond, "gauge samples while the test runs")
	// More samples, read now: the tags and the interval's TTFT mean.
	var got map[string][]metrics.Sample
	require.Eventually(t, func() bool {
		got = vu.drain()
		return len(got["llm_server_requests_waiting"]) > 0 && len(got["llm_server_scrape_duration"]) > 0
	}, 5*time.Second, 20*time.Millisecond)
	w := got["llm_server_requests_waiting"][0]
	assert.InDelta(t, 2, w.Value, 1e-9)
	assert.Equal(t, "svc", w.Tags.Map()["name"])
	assert.Equal(t, "vllm", w.Tags.Map()["engine"])

	out := vu.run(`llm.report(undefined, {stdout: true, json: 'run.json'})`).Export().(map[string]any) //nolint:forcetypeassert
	text, _ := out["stdout"].(string)
	assert.Contains(t, text, "The server's own view")
	assert.Contains(t, text, "TTFT split (run)")
	var rec struct {
		Server []struct {
			Endpoint string `json:"endpoint"`
			Client   string `json:"client"`
			Engine   string `json:"engine"`
			Run      struct {
				Counters map[string]float64 `json:"counters"`
			} `json:"run"`
		} `json:"server"`
	}
	raw, _ := out["run.json"].(string)
	require.NoError(t, json.Unmarshal([]byte(raw), &rec))
	require.Len(t, rec.Server, 1)
	assert.Equal(t, "svc", rec.Server[0].Client)
	assert.Equal(t, "vllm", rec.Server[0].Engine)
	assert.InDelta(t, 3, rec.Server[0].Run.Counters["requests_finished"], 1e-9, "the run's delta: the calls the client made")
	assert.InDelta(t, 36, rec.Server[0].Run.Counters["prompt_tokens"], 1e-9)
	for _, s := range []string{text, raw, vu.logs.String()} {
		assert.NotContains(t, s, "metrics-secret")
	}
}

// A metrics endpoint that is not there is one warning, the calls go on, and
// the report says why the server's view is missing.
func TestServerMetricsUnreachableIsAWarningNotAFailure(t *testing.T) {
	t.Parallel()
	llmSrv, _ := streamServer(t, 0, 0, []string{"a"})
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL + "/metrics"
	dead.Close()
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, serverMetrics: {url: %q, interval: '50ms'}});`,
		llmSrv.URL, deadURL))
	vu.root.server.StartAll()
	res := vu.chat(`{messages: [{role: 'user', content: 'hi'}]}`)
	require.Equal(t, true, res["ok"])
	out := vu.run(`llm.report(undefined, {stdout: true, json: 'run.json'})`).Export().(map[string]any) //nolint:forcetypeassert
	text, _ := out["stdout"].(string)
	assert.Contains(t, text, "unknown: no scrape succeeded: serverMetrics "+deadURL+" unreachable")
	raw, _ := out["run.json"].(string)
	assert.Contains(t, raw, `"missing": "no scrape succeeded`)
}

func TestServerMetricsBadOptions(t *testing.T) {
	t.Parallel()
	for code, want := range map[string]string{
		`new llm.Client({baseURL: 'http://x', serverMetrics: {url: 'ftp://x/metrics'}})`:                   "serverMetrics.url must be http(s)://host[:port]/path",
		`new llm.Client({baseURL: 'http://x', serverMetrics: {}})`:                                         "serverMetrics.url is required",
		`new llm.Client({baseURL: 'http://x', serverMetrics: {url: 'http://m/metrics', interval: '1ms'}})`: "serverMetrics.interval must be at least 50ms",
		`new llm.Client({baseURL: 'http://x', serverMetrics: {url: 'http://m/metrics', intervall: '1s'}})`: `unknown option "serverMetrics.intervall" (did you mean "interval"?)`,
		`new llm.Client({baseURL: 'http://x', serverMetrics: {url: 'http://m/metrics'}});
		 new llm.Client({baseURL: 'http://x', serverMetrics: {url: 'http://m/metrics', interval: '2s'}})`: "named again with other options",
	} {
		rt := newTestRuntime(t)
		_, err := rt.VU.Runtime().RunString(`const llm = require('k6/x/llmstream');` + code)
		require.ErrorContains(t, err, want, code)
	}
}
