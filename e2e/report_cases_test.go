package e2e

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// The report on the tests people actually run: a warm-up left out, a wave's
// recovery, an A/B of two models on the same prompts. Each script runs
// against its own llm-sim (its `// llm-sim:` line), side by side, and its run
// record is checked for what the report must say.

type reportCase struct {
	script string
	env    map[string]string
	check  func(t *testing.T, rec map[string]any)
}

var reportCases = []reportCase{ //nolint:gochecknoglobals // the table of cases
	{
		script: "examples/warmup.js", env: map[string]string{"DURATION": "8s", "WARMUP": "3s"},
		check: func(t *testing.T, rec map[string]any) {
			t.Helper()
			ex := obj(t, rec, "excluded")
			by := obj(t, ex, "by_reason")
			require.EqualValues(t, 1, by["setup()"], "%v", ex)
			for _, reason := range []string{"scenario warmup", "tag phase=probe", "warm-up window"} {
				require.Positive(t, num(t, by, reason), "%s: %v", reason, ex)
			}
			// Every call k6 counted is either in the report or said to be left out.
			total := num(t, obj(t, rec, "meta"), "llmRequests")
			kept := num(t, obj(t, obj(t, rec, "categories"), "all"), "requests")
			require.Equal(t, total, kept+num(t, ex, "calls"), "%v", ex)
		},
	},
	{
		// The stall evidence quotes the longest real gap: at least the 800 ms
		// pause llm-sim injects, never a per-call average.
		script: "e2e/scenarios/stalls.js",
		check: func(t *testing.T, rec map[string]any) {
			t.Helper()
			for _, f := range rec["findings"].([]any) { //nolint:forcetypeassert
				if f := f.(map[string]any); f["id"] == "stalls" { //nolint:forcetypeassert
					longest := num(t, obj(t, f, "values"), "longest_gap_ms")
					require.True(t, longest >= 800 && longest < 2000, "longest gap %v ms", longest)
					return
				}
			}
			t.Fatalf("no stalls finding: %v", rec["findings"])
		},
	},
	{
		script: "e2e/scenarios/wave.js",
		check: func(t *testing.T, rec map[string]any) {
			t.Helper()
			waves, ok := rec["waves"].([]any)
			require.True(t, ok && len(waves) == 1, "waves: %v", rec["waves"])
			w := waves[0].(map[string]any) //nolint:forcetypeassert
			require.EqualValues(t, 2, w["base_concurrency"])
			require.EqualValues(t, 10, w["peak_concurrency"])
			require.Equal(t, true, w["recovered"], "%v", w)
			// The queue behind four slots drains within seconds once the burst is over.
			rs := num(t, w, "recovery_seconds")
			require.True(t, rs >= 0 && rs <= 8, "recovery %v s", rs)
			require.Greater(t, num(t, w, "peak_ttft_p50"), 5*num(t, w, "before_ttft_p50"))
		},
	},
	{
		script: "examples/ab-test.js", env: map[string]string{"DURATION": "15s"},
		check: func(t *testing.T, rec map[string]any) {
			t.Helper()
			clients := obj(t, rec, "clients")
			require.Len(t, clients, 2)
			paired, ok := rec["paired"].([]any)
			require.True(t, ok && len(paired) == 1, "paired: %v", rec["paired"])
			pc := paired[0].(map[string]any) //nolint:forcetypeassert
			require.Equal(t, "a", pc["a"])
			require.Equal(t, "b", pc["b"])
			// model-b (the 'large' profile) decodes at less than half model-a's speed.
			verdicts := map[string]string{}
			for _, r := range pc["rows"].([]any) { //nolint:forcetypeassert
				row := r.(map[string]any)                                  //nolint:forcetypeassert
				verdicts[row["metric"].(string)] = row["verdict"].(string) //nolint:forcetypeassert
			}
			require.Equal(t, "b is worse", verdicts["e2e"], "%v", pc)
			require.Equal(t, "b is worse", verdicts["tokens_per_sec"], "%v", pc)
		},
	},
}

func obj(t *testing.T, m map[string]any, key string) map[string]any {
	t.Helper()
	v, ok := m[key].(map[string]any)
	require.True(t, ok, "%s missing or not an object in %v", key, m)
	return v
}

func num(t *testing.T, m map[string]any, key string) float64 {
	t.Helper()
	v, ok := m[key].(float64)
	require.True(t, ok, "%s missing or not a number in %v", key, m)
	return v
}

func TestReportOnRealTestShapes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs k6 for about 30 s")
	}
	t.Parallel()
	runs := make([]*scriptRun, len(reportCases))
	for i, c := range reportCases {
		runs[i] = &scriptRun{script: c.script, env: c.env}
	}
	runSideBySide(t, runs)
	for i, c := range reportCases {
		r := runs[i]
		checkRun(t, r, func(t *testing.T) {
			data, err := os.ReadFile(recordPath(t, r.dir)) //nolint:gosec // a file the test's k6 run wrote
			require.NoError(t, err)
			var rec map[string]any
			require.NoError(t, json.Unmarshal(data, &rec))
			c.check(t, rec)
		})
	}
}
