package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAHostileServerFailsCallsNotTheRun: a server whose embeddings answer
// is 6 000 000 '[' (200 application/json) and whose stream sends one event
// of 4 MiB of '[' ended k6 with "fatal error: stack overflow" (the JSON
// validator recursed once per level). Each such call is a decode failure,
// the calls between them succeed, and k6 ends normally with its record.
func TestAHostileServerFailsCallsNotTheRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs k6")
	}
	deepBody := bytes.Repeat([]byte("["), 6_000_000)
	deepEvent := []byte("data: " + strings.Repeat("[", 4<<20) + "\n\n")
	var embeds, chats atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/embeddings":
			w.Header().Set("Content-Type", "application/json")
			if embeds.Add(1)%2 == 1 {
				_, _ = w.Write(deepBody)
				return
			}
			_, _ = w.Write([]byte(`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,0.2,0.3]}],"model":"m","usage":{"prompt_tokens":1,"total_tokens":1}}`))
		case "/v1/chat/completions":
			w.Header().Set("Content-Type", "text/event-stream")
			if chats.Add(1)%2 == 1 {
				_, _ = w.Write(deepEvent)
				return
			}
			_, _ = w.Write([]byte(`data: {"choices":[{"index":0,"delta":{"content":"hi there"},"finish_reason":null}]}` + "\n\n" +
				`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}` + "\n\n" +
				"data: [DONE]\n\n"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)

	record := filepath.Join(t.TempDir(), "report.json")
	code, out := runK6(t, "e2e/testdata/hostile.js", map[string]string{"LLM_BASE_URL": srv.URL + "/v1", "LLM_RECORD": record})
	require.Equal(t, 0, code, out)
	require.NotContains(t, out, "fatal error")
	for _, line := range []string{"EMBED decode", "EMBED ok", "CHAT decode", "CHAT ok"} {
		require.Equal(t, 3, strings.Count(out, line), "%q in\n%s", line, out)
	}
	require.Contains(t, out, "nested too deeply")

	data, err := os.ReadFile(record) //nolint:gosec // the test's own k6 run wrote it
	require.NoError(t, err, out)
	var rec struct {
		Categories map[string]struct {
			Requests uint64            `json:"requests"`
			Errors   map[string]uint64 `json:"errors"`
		} `json:"categories"`
	}
	require.NoError(t, json.Unmarshal(data, &rec))
	require.Equal(t, uint64(6), rec.Categories["all"].Requests, "%s", data)
	require.Equal(t, uint64(3), rec.Categories["all"].Errors["decode"], "%s", data)
}

// TestNonFiniteServerMetricsKeepTheReport: a vLLM /metrics whose TTFT
// histogram _sum turns NaN (and a queue _sum, a gauge and a counter +Inf or
// NaN) made report() throw "encoding the run record: json: unsupported
// value: NaN": no record, no HTML. The record and HTML are written, the
// figures those series touch are unknown, and one warning names them.
func TestNonFiniteServerMetricsKeepTheReport(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs k6")
	}
	fixture := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(repoRoot(t), "internal", "servermetrics", "testdata", name)) //nolint:gosec // a repository file
		require.NoError(t, err)
		return b
	}
	baseline, bad := fixture("vllm_baseline.txt"), fixture("vllm_nonfinite.txt")
	var scrapes atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/metrics":
			w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
			if scrapes.Add(1) == 1 {
				_, _ = w.Write(baseline)
				return
			}
			_, _ = w.Write(bad)
		case "/v1/chat/completions":
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write([]byte(`data: {"choices":[{"index":0,"delta":{"content":"hi there"},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)

	dir := t.TempDir()
	code, out := runK6(t, "e2e/testdata/nonfinite_metrics.js", map[string]string{
		"LLM_BASE_URL": srv.URL + "/v1", "LLM_METRICS_URL": srv.URL + "/metrics", "LLM_REPORT_DIR": dir,
	})
	require.Equal(t, 0, code, out)
	const series = `vllm:time_to_first_token_seconds_sum{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} = NaN`
	require.Contains(t, out, series, "k6's log names the series")
	html, err := os.ReadFile(filepath.Join(dir, "report.html")) //nolint:gosec // the test's own file
	require.NoError(t, err, out)
	require.NotEmpty(t, html)
	raw, err := os.ReadFile(filepath.Join(dir, "report.json")) //nolint:gosec // the test's own file
	require.NoError(t, err, out)
	var rec struct {
		Server []struct {
			Warnings []string `json:"warnings"`
			Run      struct {
				Histograms map[string]struct {
					Count float64  `json:"count"`
					Sum   *float64 `json:"sum"`
					Mean  *float64 `json:"mean"`
				} `json:"histograms"`
			} `json:"run"`
		} `json:"server"`
	}
	require.NoError(t, json.Unmarshal(raw, &rec), "%s", raw)
	require.Len(t, rec.Server, 1)
	sv := rec.Server[0]
	ttft := sv.Run.Histograms["ttft"]
	require.Positive(t, ttft.Count, "its buckets and count are still read")
	require.Nil(t, ttft.Sum)
	require.Nil(t, ttft.Mean)
	require.Condition(t, func() bool {
		for _, w := range sv.Warnings {
			if strings.Contains(w, series) {
				return true
			}
		}
		return false
	}, "the record's warnings name the series: %q", sv.Warnings)
}
