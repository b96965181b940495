package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A precision-gated run ends by itself once its targets are met, well before
// its cap, and its record and report say so. Not parallel: how soon a p95 is
// known to ±10 % depends on how its calls spread, and beside the capacity
// searches a busy machine's stalls gave TTFT a second mode and the gate could
// take nearly its whole minute.
func TestPrecisionGatedRunEndsWhenMet(t *testing.T) {
	url := startSim(t, defaultSimArgs...)
	dir := t.TempDir()
	start := time.Now()
	code, out := runK6(t, filepath.Join("examples", "precision.js"),
		map[string]string{"LLM_BASE_URL": url + "/v1", "CAP": "90s", "LLM_REPORT_DIR": dir})
	took := time.Since(start)
	require.Equal(t, 0, code, out)
	require.Less(t, took, 60*time.Second, "the run went on towards its cap")
	require.Contains(t, out, "precision gate: met after")
	require.Contains(t, out, "every target known to its margin")
	raw, err := os.ReadFile(filepath.Join(dir, "precision.json")) //nolint:gosec // the test's own file
	require.NoError(t, err)
	var rec struct {
		Precision struct {
			Outcome string   `json:"outcome"`
			EndedS  *float64 `json:"ended_s"`
			Targets []struct {
				Met   bool     `json:"met"`
				Calls int      `json:"calls"`
				Lo    *float64 `json:"lo_ms"`
				Hi    *float64 `json:"hi_ms"`
			} `json:"targets"`
		} `json:"precision"`
	}
	require.NoError(t, json.Unmarshal(raw, &rec))
	require.Equal(t, "met", rec.Precision.Outcome)
	require.NotNil(t, rec.Precision.EndedS)
	require.Less(t, *rec.Precision.EndedS, 60.0)
	require.Len(t, rec.Precision.Targets, 2)
	for _, tg := range rec.Precision.Targets {
		require.True(t, tg.Met)
		require.GreaterOrEqual(t, tg.Calls, 72, "a p95 is bounded by no fewer calls")
		require.NotNil(t, tg.Lo)
		require.NotNil(t, tg.Hi)
	}
}
