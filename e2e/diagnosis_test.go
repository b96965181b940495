package e2e

import (
	"encoding/json"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The diagnosis is only worth something if it names the cause a real service
// produces. Each scenario below sets llm-sim up to produce one cause strongly
// (its `// llm-sim:` first line), runs k6 with report({json}) and checks the
// run record's findings: the cause's id must be there, and the causes it could
// be mistaken for must not. A healthy run must produce no finding at all.

// diagnosisCase is one scripted scenario and what its record must say.
type diagnosisCase struct {
	script  string   // relative to the repository root
	want    []string // finding ids that must be present (none at all for a healthy run)
	mustNot []string // finding ids that would mean the rules confuse causes
	healthy bool     // no finding at all
	// alone: the case says client_bound must stay silent, so it runs with the
	// machine to itself, as a user's test would; side by side with a dozen
	// other k6 processes on two cores the load generator IS late, and the
	// report rightly says so.
	alone bool
}

var diagnosisCases = []diagnosisCase{ //nolint:gochecknoglobals // the table of scenarios
	{script: "e2e/scenarios/healthy.js", healthy: true, alone: true},
	// The step-load example is the knee scenario: docs/report.md and docs/guide.md promise it names both.
	{script: "examples/step-load.js", want: []string{"knee", "queue_bound"}, mustNot: []string{"decode_saturated", "drift"}},
	{script: "e2e/scenarios/queue_bound.js", want: []string{"queue_bound"}, mustNot: []string{"decode_saturated"}},
	// 8 s steps, as users write them: still stages, still diagnosed.
	{script: "e2e/scenarios/short_steps.js", want: []string{"knee", "queue_bound"}, mustNot: []string{"decode_saturated"}},
	// The same with an arrival-rate executor: the stages are rates, not VU counts.
	{script: "e2e/scenarios/arrival_steps.js", want: []string{"knee", "queue_bound"}, mustNot: []string{"decode_saturated"}},
	{script: "e2e/scenarios/decode_saturated.js", want: []string{"decode_saturated"}, mustNot: []string{"queue_bound"}},
	{script: "e2e/scenarios/network_heavy.js", want: []string{"network_heavy"}, mustNot: []string{"client_bound"}, alone: true},
	{script: "e2e/scenarios/gateway_buffering.js", want: []string{"gateway_buffering"}, mustNot: []string{"stalls"}},
	// gapSamples 'request' sends k6 one gap per call; the report still reads every gap.
	{script: "e2e/scenarios/gateway_buffering_request.js", want: []string{"gateway_buffering"}, mustNot: []string{"stalls"}},
	{script: "e2e/scenarios/client_bound.js", want: []string{"client_bound"}},
	{script: "e2e/scenarios/cache_busted.js", want: []string{"cache_busted"}},
	{script: "e2e/scenarios/head_of_line.js", want: []string{"head_of_line"}},
	{script: "e2e/scenarios/stalls.js", want: []string{"stalls"}, mustNot: []string{"gateway_buffering"}},
	{script: "e2e/scenarios/length_variance.js", want: []string{"length_variance"}, mustNot: []string{"stalls"}},
	{script: "e2e/scenarios/drift.js", want: []string{"drift"}},
}

// runRecord is the part of the JSON run record these tests read.
type runRecord struct {
	Findings []struct {
		ID       string   `json:"id"`
		Evidence []string `json:"evidence"`
	} `json:"findings"`
	Comparison *struct {
		Rows []struct {
			Category string `json:"category"`
			Metric   string `json:"metric"`
			Stat     string `json:"stat"`
			Verdict  string `json:"verdict"`
		} `json:"rows"`
	} `json:"comparison"`
	Stages []struct {
		Concurrency float64 `json:"concurrency"`
	} `json:"stages"`
	Pareto []struct {
		Source string  `json:"source"`
		Level  float64 `json:"level"`
	} `json:"pareto"`
}

func (r runRecord) ids() []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, f.ID)
	}
	return out
}

// k6Run is runK6 for a goroutine: it reports failures instead of stopping
// the test, which only the test's own goroutine may do.
type k6Run struct {
	code    int
	out     string
	err     error
	elapsed time.Duration
}

func runK6Async(k6, root, script string, env map[string]string) k6Run {
	// --address "": no REST API, so a dozen parallel runs do not fight over its port.
	args := []string{"run", "--no-usage-report", "--no-color", "--address", ""}
	for k, v := range env {
		args = append(args, "-e", k+"="+v)
	}
	args = append(args, script)
	cmd := exec.Command(k6, args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "K6_NO_USAGE_REPORT=true")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	res := k6Run{out: string(out), elapsed: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	case err != nil:
		res.err = err
	}
	return res
}

func readRecord(t *testing.T, path, k6Out string) runRecord {
	t.Helper()
	data, err := os.ReadFile(path) //nolint:gosec // a file the test's k6 run wrote
	require.NoError(t, err, k6Out)
	var rec runRecord
	require.NoError(t, json.Unmarshal(data, &rec), k6Out)
	return rec
}

// scriptRun is one script run by runSideBySide: its extra environment, the
// report directory it writes into, and what k6 did.
type scriptRun struct {
	script string
	env    map[string]string
	dir    string
	res    k6Run
}

// runSideBySide runs every script at once, each k6 against its own llm-sim
// (the script's `// llm-sim:` line): they mostly wait on the simulator's
// clock, so running them side by side keeps a set near the length of its
// longest. go test runs only GOMAXPROCS parallel tests at a time, hence plain
// goroutines here.
func runSideBySide(t *testing.T, runs []*scriptRun) {
	t.Helper()
	k6, _ := binaries(t)
	root := repoRoot(t)
	var wg sync.WaitGroup
	for _, r := range runs {
		r.dir = t.TempDir()
		args := simArgs(t, filepath.Join(root, r.script))
		// E2E_KEEP=DIR keeps each run's report and llm-sim's trace: a case
		// that failed once in CI can be read call by call.
		if keep := os.Getenv("E2E_KEEP"); keep != "" {
			dir, err := os.MkdirTemp(keep, strings.TrimSuffix(filepath.Base(r.script), ".js")+"-")
			require.NoError(t, err)
			r.dir, args = dir, append(args, "--trace", filepath.Join(dir, "trace.jsonl"))
			t.Logf("%s: kept in %s", r.script, dir)
		}
		url := startSim(t, args...)
		env := map[string]string{"LLM_BASE_URL": url + "/v1", "LLM_REPORT_DIR": r.dir}
		for k, v := range r.env {
			env[k] = v
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.res = runK6Async(k6, root, r.script, env)
		}()
	}
	wg.Wait()
}

// checkRun is the subtest of one script: k6 succeeded, then check reads its record.
func checkRun(t *testing.T, r *scriptRun, check func(t *testing.T)) {
	t.Helper()
	name := strings.TrimSuffix(filepath.Base(r.script), ".js")
	t.Run(name, func(t *testing.T) {
		require.NoError(t, r.res.err)
		require.Equal(t, 0, r.res.code, r.res.out)
		t.Logf("%s: %s", name, r.res.elapsed.Round(time.Second))
		check(t)
	})
}

// TestDiagnosisScenarios runs every scenario that may share the machine at
// once (~65 s in all).
func TestDiagnosisScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("runs k6 for about a minute")
	}
	t.Parallel()
	checkDiagnoses(t, slices.DeleteFunc(slices.Clone(diagnosisCases), func(c diagnosisCase) bool { return c.alone }))
}

// TestDiagnosisAlone runs the scenarios that need the machine to themselves
// one after another. It is not parallel: go test runs it before any parallel
// test of the package starts.
func TestDiagnosisAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("runs k6 for about half a minute")
	}
	// On a machine whose CPUs other processes keep busy, k6 runs late whatever
	// it does, and client_bound rightly says so: there is nothing to check.
	// (The CPUs now, not the load average: that still carries the builds and
	// fuzzing that ran a minute before.)
	if busy := cpuBusy(t, 2*time.Second); busy > 0.5 {
		t.Skipf("the machine is busy (%.0f%% of its %d CPUs in use by other processes): a healthy run cannot be told "+
			"from a starved one here", 100*busy, runtime.NumCPU())
	}
	for _, c := range diagnosisCases {
		if c.alone {
			checkDiagnoses(t, []diagnosisCase{c})
		}
	}
}

// cpuBusy is the share of the machine's CPU time spent outside idle over the
// next d, from /proc/stat (0 where unknown).
func cpuBusy(t *testing.T, d time.Duration) float64 {
	t.Helper()
	read := func() (idle, total float64) {
		data, err := os.ReadFile("/proc/stat")
		if err != nil {
			return 0, 0
		}
		f := strings.Fields(strings.SplitN(string(data), "\n", 2)[0]) // "cpu user nice system idle iowait …"
		for i, v := range f[1:] {
			n, _ := strconv.ParseFloat(v, 64)
			total += n
			if i == 3 || i == 4 { // idle, iowait
				idle += n
			}
		}
		return idle, total
	}
	i0, t0 := read()
	time.Sleep(d)
	i1, t1 := read()
	if t1 <= t0 {
		return 0
	}
	return 1 - (i1-i0)/(t1-t0)
}

func checkDiagnoses(t *testing.T, cases []diagnosisCase) {
	t.Helper()
	runs := make([]*scriptRun, len(cases))
	for i, c := range cases {
		runs[i] = &scriptRun{script: c.script}
	}
	runSideBySide(t, runs)
	for i, c := range cases {
		r := runs[i]
		checkRun(t, r, func(t *testing.T) {
			rec := readRecord(t, recordPath(t, r.dir), r.res.out)
			got := rec.ids()
			if c.healthy {
				require.Empty(t, got, "a healthy run must produce no finding:\n%s", r.res.out)
			}
			for _, id := range c.want {
				require.Contains(t, got, id, r.res.out)
			}
			for _, id := range c.mustNot {
				require.NotContains(t, got, id, r.res.out)
			}
			if strings.HasPrefix(c.script, "examples/") {
				// The example at its full length: TestExamples runs it
				// shortened, so the step-load page is checked here.
				checkReportLayout(t, filepath.Base(c.script), r.dir)
			}
			if c.script == "examples/step-load.js" {
				require.GreaterOrEqual(t, len(rec.Stages), 2, r.res.out)
				require.Len(t, rec.Pareto, len(rec.Stages), "one Pareto point per load stage")
				for i, p := range rec.Pareto {
					require.Equal(t, "stage", p.Source)
					require.Equal(t, rec.Stages[i].Concurrency, p.Level)
				}
			}
		})
	}
}

// recordPath finds the run record a script wrote into its report directory
// (the examples name theirs, the scenarios write report.json).
func recordPath(t *testing.T, dir string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	require.NoError(t, err)
	require.Len(t, files, 1, "one run record in %s", dir)
	return files[0]
}

// TestBaselineVerdictAfterSlowerDecode is the user's second run: the same
// report example against a simulator whose decode steps take half as long again,
// compared with the first run's record. The comparison must call it worse, and
// never better, for the per-token time and the end-to-end time.
func TestBaselineVerdictAfterSlowerDecode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs k6 twice")
	}
	t.Parallel()
	k6, _ := binaries(t)
	root := repoRoot(t)
	first, second := t.TempDir(), t.TempDir()

	url := startSim(t, "--model", "sim-large=demo", "--seed", "1")
	res := runK6Async(k6, root, "examples/report.js", map[string]string{
		"LLM_BASE_URL": url + "/v1", "LLM_REPORT_DIR": first,
	})
	require.NoError(t, res.err)
	require.Equal(t, 0, res.code, res.out)
	baseline := filepath.Join(first, "report.json")
	require.FileExists(t, baseline)

	slower := startSim(t, "--model", "sim-large=demo", "--set", "decode_base_ms=30", "--seed", "1")
	res = runK6Async(k6, root, "examples/report.js", map[string]string{
		"LLM_BASE_URL": slower + "/v1", "LLM_REPORT_DIR": second, "LLM_BASELINE": baseline,
	})
	require.NoError(t, res.err)
	// llm_regression may fail its threshold (99): that is the verdict arriving live.
	require.Contains(t, []int{0, k6ThresholdsFailed}, res.code, res.out)
	rec := readRecord(t, filepath.Join(second, "report.json"), res.out)
	require.NotNil(t, rec.Comparison, res.out)
	// Every category has ≥ 30 calls on both sides (report.js sizes its load for
	// it), so each row has a bootstrap interval behind its verdict.
	worse := map[string]bool{}
	cats := map[string]bool{}
	for _, row := range rec.Comparison.Rows {
		if row.Metric != "tpot" && row.Metric != "e2e" {
			continue
		}
		cats[row.Category] = true
		require.NotEqual(t, "better", row.Verdict, "%s %s %s", row.Category, row.Metric, row.Stat)
		if row.Verdict == "worse" && row.Stat == "p50" {
			worse[row.Category+"/"+row.Metric] = true
		}
	}
	require.NotEmpty(t, cats, res.out)
	for cat := range cats {
		for _, m := range []string{"tpot", "e2e"} {
			require.True(t, worse[cat+"/"+m], "%s %s P50 must be worse with a slower decode step; worse: %v\n%s",
				cat, m, slices.Sorted(maps.Keys(worse)), res.out)
		}
	}
	require.Contains(t, res.out, "worse")
}
