package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// simAt runs llm-sim on addr until kill is called (SIGKILL: a crash, its
// counters lost).
func simAt(t *testing.T, addr string, args ...string) (kill func()) {
	t.Helper()
	_, sim := binaries(t)
	cmd := exec.Command(sim, append([]string{"--addr", addr}, args...)...) //nolint:gosec // test binary
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	listening := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if listenLine.MatchString(sc.Text()) {
				close(listening)
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case <-listening:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("llm-sim did not start within 30s")
	}
	killed := false
	kill = func() {
		if !killed {
			killed = true
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}
	t.Cleanup(kill)
	return kill
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// restartRecord is what the restart test reads of the record.
type restartRecord struct {
	Categories map[string]struct {
		Requests uint64            `json:"requests"`
		Errors   map[string]uint64 `json:"errors"`
	} `json:"categories"`
	Findings []struct {
		ID       string   `json:"id"`
		Evidence []string `json:"evidence"`
	} `json:"findings"`
	Server []struct {
		Run struct {
			Counters map[string]float64 `json:"counters"`
			Resets   map[string]int     `json:"resets"`
		} `json:"run"`
	} `json:"server"`
}

// TestSimRestartGivesNoFalseCountMismatch kills llm-sim mid-run and starts
// it again on the same address: calls fail while it is down (refused at
// connect: they never reached it), and its counters begin again from 0.
// The server's count cannot be held against the client's then: the report
// says why instead of raising server_count_mismatch.
func TestSimRestartGivesNoFalseCountMismatch(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	simFlags := []string{"--model", "sim-large=demo", "--seed", "1"}
	kill := simAt(t, addr, simFlags...)
	dir := t.TempDir()
	k6, _ := binaries(t)
	cmd := exec.Command(k6, "run", "--no-usage-report", "--no-color", //nolint:gosec // test binary
		"-e", "LLM_BASE_URL=http://"+addr+"/v1", "-e", "LLM_REPORT_DIR="+dir, "-e", "DURATION=10s",
		filepath.Join("e2e", "testdata", "server_calls.js"))
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), "K6_NO_USAGE_REPORT=true")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	require.Eventually(t, func() bool { return finishedOnSim("http://"+addr) >= 20 }, 60*time.Second, 100*time.Millisecond,
		"calls were answered before the crash")
	kill()
	time.Sleep(1500 * time.Millisecond) // calls are refused at connect meanwhile
	simAt(t, addr, simFlags...)
	require.NoError(t, cmd.Wait(), out.String())
	text := out.String()

	raw, err := os.ReadFile(filepath.Join(dir, "report.json")) //nolint:gosec // the test's own file
	require.NoError(t, err, text)
	var rec restartRecord
	require.NoError(t, json.Unmarshal(raw, &rec))
	for _, f := range rec.Findings {
		assert.NotEqual(t, "server_count_mismatch", f.ID, "%v", f.Evidence)
	}
	assert.Positive(t, rec.Categories["all"].Errors["network"], "calls failed while llm-sim was down")
	require.Len(t, rec.Server, 1)
	assert.Positive(t, rec.Server[0].Run.Resets["requests_finished"], "the restart is seen")
	assert.Contains(t, text, "not compared: the server's count began again from 0 during the run (a restart)")
}

var finishedLine = regexp.MustCompile(`(?m)^vllm:request_success_total\{[^}]*\} (\d+)`)

// finishedOnSim is llm-sim's count of finished requests.
func finishedOnSim(base string) int {
	n := 0
	body := simMetrics(base)
	for _, m := range finishedLine.FindAllStringSubmatch(body, -1) {
		v, _ := strconv.Atoi(m[1])
		n += v
	}
	return n
}

// TestServerFinishedInK6IsTheReportsCount: the llm_server_requests_finished
// counter k6 sums is the server's count in the report, the final snapshot's
// increase included (it used to be dropped, the test's end having stopped
// the samples first).
func TestServerFinishedInK6IsTheReportsCount(t *testing.T) {
	t.Parallel()
	url := startSim(t, "--model", "sim-large=demo", "--seed", "1")
	dir := t.TempDir()
	code, out := runK6(t, filepath.Join("e2e", "testdata", "server_calls.js"),
		map[string]string{"LLM_BASE_URL": url + "/v1", "LLM_REPORT_DIR": dir, "DURATION": "4s"})
	require.Equal(t, 0, code, out)
	m := regexp.MustCompile(`llm_server_requests_finished[.\s]*:\s*(\d+)`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	inK6, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	raw, err := os.ReadFile(filepath.Join(dir, "report.json")) //nolint:gosec // the test's own file
	require.NoError(t, err)
	var rec restartRecord
	require.NoError(t, json.Unmarshal(raw, &rec))
	require.Len(t, rec.Server, 1)
	assert.InDelta(t, rec.Server[0].Run.Counters["requests_finished"], float64(inK6), 0, out)
	assert.InDelta(t, float64(rec.Categories["all"].Requests), float64(inK6), 0, "every call finished on the server")
}
