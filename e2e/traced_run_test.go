package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// tracedRun is a scenario run against an llm-sim that kept its trace: the
// simulator's own record of every request, the ground truth the server's
// view in the run's report is checked against.
type tracedRun struct {
	code   int    // k6's exit code
	out    string // k6's output
	report []byte // the run's report.json
	trace  string // the path of llm-sim's trace
}

// runTraced starts llm-sim as the scenario (e2e/scenarios/NAME) asks for
// (simArgs), with --trace, and runs the scenario against it with its
// report written.
func runTraced(t *testing.T, scenario string) tracedRun {
	t.Helper()
	script := filepath.Join("e2e", "scenarios", scenario)
	trace := filepath.Join(t.TempDir(), "trace.jsonl")
	sim := startSim(t, append(simArgs(t, filepath.Join(repoRoot(t), script)), "--trace", trace)...)
	dir := t.TempDir()
	code, out := runK6(t, script, map[string]string{"LLM_BASE_URL": sim + "/v1", "LLM_REPORT_DIR": dir})
	raw, err := os.ReadFile(filepath.Join(dir, "report.json")) //nolint:gosec // the test's own file
	require.NoError(t, err, "no report (exit %d):\n%s", code, out)
	return tracedRun{code: code, out: out, report: raw, trace: trace}
}

// eachTraced decodes every line of llm-sim's trace at path into a T and
// hands it to fn, in the trace's order.
func eachTraced[T any](t *testing.T, path string, fn func(T)) {
	t.Helper()
	f, err := os.Open(path) //nolint:gosec // the test's own file
	require.NoError(t, err)
	defer f.Close() //nolint:errcheck // read only
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		var v T
		require.NoError(t, json.Unmarshal(sc.Bytes(), &v))
		fn(v)
	}
	require.NoError(t, sc.Err())
}
