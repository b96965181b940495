package e2e

import (
	"encoding/json"
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

// TestDeadMetricsEndpointDoesNotStallTheRun: a 5 s test whose /metrics
// never answers took 26 s (the first scrape held the start for its 10 s
// timeout, the final one waited 10 s more). The start now waits at most
// 0.5 s, and the final scrape after an unanswered one 1 s: the run ends
// well under 10 s, with one warning naming the endpoint, and the report
// says the server's view is missing.
func TestDeadMetricsEndpointDoesNotStallTheRun(t *testing.T) {
	dead := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers
	}))
	t.Cleanup(dead.Close)
	url := startSim(t, "--model", "sim-fast=fast", "--seed", "1")
	dir := t.TempDir()
	start := time.Now()
	code, out := runK6(t, filepath.Join("e2e", "testdata", "server_dead.js"), map[string]string{
		"LLM_BASE_URL": url + "/v1", "METRICS_URL": dead.URL + "/metrics", "LLM_REPORT_DIR": dir,
	})
	took := time.Since(start)
	require.Equal(t, 0, code, out)
	assert.Less(t, took, 10*time.Second, "a 5 s test waited for a dead /metrics:\n%s", out)

	var warnings []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "level=warning") && strings.Contains(l, "serverMetrics") {
			warnings = append(warnings, l)
		}
	}
	require.Len(t, warnings, 1, "one warning:\n%s", out)
	assert.Contains(t, warnings[0], dead.URL+"/metrics did not answer")

	raw, err := os.ReadFile(filepath.Join(dir, "report.json")) //nolint:gosec // the test's own file
	require.NoError(t, err)
	var rec struct {
		Server []struct {
			Missing string `json:"missing"`
		} `json:"server"`
	}
	require.NoError(t, json.Unmarshal(raw, &rec))
	require.Len(t, rec.Server, 1)
	assert.Contains(t, rec.Server[0].Missing, "did not answer")
}
