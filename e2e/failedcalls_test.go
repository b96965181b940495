package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/record"
)

// TestFailedCallsCountAlikeInK6AndTheRecord: against an llm-sim that
// disconnects half of its streams after their fifth token, every figure the
// report keeps as a distribution has as many k6 samples as the run record
// has values (docs/metrics.md, "Failed calls"): a figure a failed call
// measured (TTFB, TTFT, its gaps) counts in both, its k6 samples tagged
// error_type; a figure of a whole answer (E2E, TPOT, tokens/s) counts in
// neither.
func TestFailedCallsCountAlikeInK6AndTheRecord(t *testing.T) {
	url := startSim(t, "--model", "sim-fast=fast", "--seed", "1", "--fault", "disconnect@5:0.5")
	dir := t.TempDir()
	rec, points := filepath.Join(dir, "record.json"), filepath.Join(dir, "points.json")
	code, out := runK6(t, filepath.Join("e2e", "testdata", "failed_calls.js"),
		map[string]string{"LLM_BASE_URL": url + "/v1", "LLM_RECORD": rec}, "--out", "json="+points)
	require.Equal(t, 0, code, out)

	samples, failedSamples := k6PointCounts(t, points)
	raw, err := os.ReadFile(rec) //nolint:gosec // the test's own file
	require.NoError(t, err)
	var r struct {
		Categories map[string]struct {
			Requests uint64
			Failures uint64
			Metrics  map[string]struct{ Count uint64 }
		}
	}
	require.NoError(t, json.Unmarshal(raw, &r))
	all := r.Categories["all"]
	require.EqualValues(t, 40, all.Requests)
	require.EqualValues(t, samples["llm_errors"], all.Failures)
	require.Greater(t, all.Failures, uint64(5), "the fault failed calls")
	require.Less(t, all.Failures, uint64(35), "the fault left calls answered")

	compared := 0
	for _, f := range record.Figures {
		d := f.Keep.Dist
		if f.Metric == "" || d == "" {
			continue
		}
		t.Logf("%-22s %-12s k6 %4d (%3d failed) record %4d", f.Metric, f.Failed, samples[f.Metric], failedSamples[f.Metric],
			all.Metrics[d.String()].Count)
		require.Equalf(t, samples[f.Metric], all.Metrics[d.String()].Count,
			"%s: k6's samples against the record's %s (%d of k6's from failed calls)", f.Metric, d, failedSamples[f.Metric])
		switch f.Failed {
		case record.Counted:
			if d == record.DistTTFT || d == record.DistGap {
				require.Positivef(t, failedSamples[f.Metric], "%s: the failed calls measured it: counted, tagged error_type", f.Metric)
			}
		case record.AnswersOnly:
			require.Zerof(t, failedSamples[f.Metric], "%s describes a whole answer: no sample for a failed call", f.Metric)
		}
		compared++
	}
	require.GreaterOrEqual(t, compared, 8)
}

// k6PointCounts counts the points of each metric in k6's --out json file, and
// those tagged error_type.
func k6PointCounts(t *testing.T, path string) (all, failed map[string]uint64) {
	t.Helper()
	f, err := os.Open(path) //nolint:gosec // the test's own file
	require.NoError(t, err)
	defer f.Close() //nolint:errcheck // read only
	all, failed = map[string]uint64{}, map[string]uint64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var p struct {
			Type   string
			Metric string
			Data   struct{ Tags map[string]string }
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &p))
		if p.Type != "Point" {
			continue
		}
		all[p.Metric]++
		if p.Data.Tags["error_type"] != "" {
			failed[p.Metric]++
		}
	}
	require.NoError(t, sc.Err())
	return all, failed
}
