package e2e

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBadExportersWarnOnceEach: beside a healthy engine, an exporter that
// never answers, one whose port is closed and one that serves an HTML page
// at 200, and an engine's model list that is HTML: one warning each, the
// test passes with every call, the healthy engine's view is whole, and the
// record says why each bad one is missing.
func TestBadExportersWarnOnceEach(t *testing.T) {
	t.Parallel()
	hung := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	t.Cleanup(hung.Close)
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html><body>502 Bad Gateway</body></html>"))
	}))
	t.Cleanup(garbage.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	down := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now

	sim := startSim(t, "--model", "sim-fast=fast", "--seed", "1")
	dir := t.TempDir()
	start := time.Now()
	code, out := runK6(t, filepath.Join("e2e", "testdata", "server_bad_exporters.js"), map[string]string{
		"LLM_BASE_URL": sim + "/v1", "ENGINE_URL": sim + "/metrics", "HUNG_URL": hung.URL, "DOWN_URL": down,
		"GARBAGE_URL": garbage.URL, "LLM_REPORT_DIR": dir,
	})
	require.Equal(t, 0, code, out)
	assert.Less(t, time.Since(start), 12*time.Second, "a 3 s test waited for its bad exporters:\n%s", out)

	var warnings []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "level=warning") && strings.Contains(l, "serverMetrics") {
			warnings = append(warnings, l)
		}
	}
	require.Len(t, warnings, 4, "one warning each:\n%s", strings.Join(warnings, "\n"))
	for _, want := range []string{hung.URL + "/metrics did not answer", down + "/metrics unreachable",
		garbage.URL + "/metrics: ", "the model list at " + garbage.URL + "/v1/models: not OpenAI's model list"} {
		n := 0
		for _, w := range warnings {
			if strings.Contains(w, want) {
				n++
			}
		}
		assert.Equal(t, 1, n, "one warning with %q:\n%s", want, strings.Join(warnings, "\n"))
	}

	raw, err := os.ReadFile(filepath.Join(dir, "report.json")) //nolint:gosec // the test's own file
	require.NoError(t, err)
	var rec struct {
		Categories map[string]struct {
			Requests uint64 `json:"requests"`
			Failures uint64 `json:"failures"`
		} `json:"categories"`
		Server []struct {
			Source   string            `json:"source"`
			Missing  string            `json:"missing"`
			Warnings []string          `json:"warnings"`
			Models   []json.RawMessage `json:"models"`
			Run      *struct {
				Counters map[string]float64 `json:"counters"`
			} `json:"run"`
		} `json:"server"`
	}
	require.NoError(t, json.Unmarshal(raw, &rec))
	all := rec.Categories["all"]
	require.Positive(t, all.Requests)
	assert.Zero(t, all.Failures)
	require.Len(t, rec.Server, 4)
	engine := rec.Server[0]
	require.Equal(t, "engine", engine.Source)
	require.NotNil(t, engine.Run, "the healthy engine's view is whole")
	assert.InDelta(t, float64(all.Requests), engine.Run.Counters["requests_finished"], 0)
	assert.Empty(t, engine.Models, "the model list is unknown, not empty")
	require.Len(t, engine.Warnings, 1)
	assert.Contains(t, engine.Warnings[0], "model list")
	for _, bad := range rec.Server[1:] {
		assert.Nil(t, bad.Run, bad.Source)
		assert.NotEmpty(t, bad.Missing, "%s: the record says why", bad.Source)
	}
}
