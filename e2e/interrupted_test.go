package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// interruptedRecord is what the interrupted run's record must say.
type interruptedRecord struct {
	Interrupted *struct {
		By       string   `json:"by"`
		Detail   string   `json:"detail"`
		RanS     float64  `json:"ran_s"`
		PlannedS *float64 `json:"planned_s"`
		Canceled uint64   `json:"canceled"`
	} `json:"interrupted"`
	Categories map[string]struct {
		Requests uint64            `json:"requests"`
		Failures uint64            `json:"failures"`
		Errors   map[string]uint64 `json:"errors"`
		Metrics  map[string]struct {
			Count uint64 `json:"count"`
		} `json:"metrics"`
	} `json:"categories"`
}

// simRunning reads llm-sim's requests running now from its /metrics.
var simRunning = regexp.MustCompile(`(?m)^vllm:num_requests_running\{[^}]*\} (\d+)`)

func runningOnSim(base string) int {
	n := 0
	for _, m := range simRunning.FindAllStringSubmatch(simMetrics(base), -1) {
		v, _ := strconv.Atoi(m[1])
		n += v
	}
	return n
}

// simMetrics is llm-sim's /metrics page ("" when it does not answer).
func simMetrics(base string) string {
	resp, err := http.Get(base + "/metrics") //nolint:gosec,noctx // the test's own simulator
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestInterruptedRunsAreMarked stops a 30 s test early three ways: the
// record, the text and the HTML report say it was interrupted, by what,
// after how long of its 30 s, and count the calls cut in flight as failed
// with the error type canceled, in no latency figure.
func TestInterruptedRunsAreMarked(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ stop, by, detail string }{
		{"signal", "signal", "SIGINT"},
		{"abort", "test.abort()", "enough for this test"},
		{"threshold", "threshold", "llm_ttft: p(95)<1"},
	} {
		t.Run(c.stop, func(t *testing.T) {
			base := startSim(t, "--model", "sim-large=demo", "--seed", "1")
			dir := t.TempDir()
			k6, _ := binaries(t)
			cmd := exec.Command(k6, "run", "--no-usage-report", "--no-color", //nolint:gosec // test binary
				"-e", "LLM_BASE_URL="+base+"/v1", "-e", "LLM_REPORT_DIR="+dir, "-e", "STOP="+c.stop,
				filepath.Join("e2e", "testdata", "interrupted.js"))
			cmd.Dir = repoRoot(t)
			cmd.Env = append(os.Environ(), "K6_NO_USAGE_REPORT=true")
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			require.NoError(t, cmd.Start())
			if c.stop == "signal" {
				require.Eventually(t, func() bool { return runningOnSim(base) >= 3 }, 60*time.Second, 100*time.Millisecond,
					"the long calls are in flight")
				time.Sleep(time.Second)
				require.NoError(t, cmd.Process.Signal(os.Interrupt))
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				_ = err // k6's exit status is the case's to check below: an interrupted run may exit non-zero
			case <-time.After(2 * time.Minute):
				_ = cmd.Process.Kill()
				t.Fatalf("k6 did not stop:\n%s", out.String())
			}
			text := out.String()

			raw, err := os.ReadFile(filepath.Join(dir, "report.json")) //nolint:gosec // the test's own file
			require.NoError(t, err, text)
			var rec interruptedRecord
			require.NoError(t, json.Unmarshal(raw, &rec))
			require.NotNil(t, rec.Interrupted, "the record says the run was interrupted:\n%s", text)
			i := rec.Interrupted
			assert.Equal(t, c.by, i.By)
			assert.Contains(t, i.Detail, c.detail)
			require.NotNil(t, i.PlannedS)
			assert.InDelta(t, 30, *i.PlannedS, 0)
			assert.Positive(t, i.RanS)
			assert.Less(t, i.RanS, 30.0)
			assert.Positive(t, i.Canceled, "the long calls were cut in flight")
			all := rec.Categories["all"]
			assert.Equal(t, i.Canceled, all.Errors["canceled"], "counted as failed calls of the type canceled")
			assert.GreaterOrEqual(t, all.Failures, i.Canceled)
			assert.Equal(t, all.Requests-all.Failures, all.Metrics["e2e"].Count, "no cancelled call in a latency figure")

			assert.Contains(t, text, "⚠ interrupted: stopped by")
			page, err := os.ReadFile(filepath.Join(dir, "report.html")) //nolint:gosec // the test's own file
			require.NoError(t, err)
			assert.True(t, strings.Contains(string(page), `id="interrupted"`), "the HTML page says it")
		})
	}
}
