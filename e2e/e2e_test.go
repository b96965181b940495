// Package e2e builds the custom k6 and llm-sim, starts the simulator on
// loopback, and runs every example script against it the way a user would:
// `k6 run` with thresholds, judged by k6's exit code.
package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// k6ThresholdsFailed is k6's exit code when a threshold is crossed.
const k6ThresholdsFailed = 99

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	return root
}

// k6Override names a k6 binary built elsewhere to run the tests with instead
// of ./cmd/k6: scripts/k6v2.sh sets it to the module's k6 v2 build, so the
// same tests prove both majors.
const k6Override = "LLMSTREAM_E2E_K6"

// binaries builds ./cmd/k6, ./cmd/llm-sim and ./cmd/llmstream once per test
// process (k6 not when LLMSTREAM_E2E_K6 names one).
func binaries(t *testing.T) (k6, sim string) {
	t.Helper()
	override := os.Getenv(k6Override)
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "llmstream-e2e-")
		if buildErr != nil {
			return
		}
		if override != "" {
			if _, buildErr = os.Stat(override); buildErr != nil {
				buildErr = fmt.Errorf("%s: %w", k6Override, buildErr)
				return
			}
		}
		for _, pkg := range []string{"k6", "llm-sim", "llmstream"} {
			if pkg == "k6" && override != "" {
				continue
			}
			cmd := exec.Command("go", "build", "-o", filepath.Join(binDir, pkg), "./cmd/"+pkg)
			cmd.Dir = repoRoot(t)
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
				return
			}
		}
	})
	require.NoError(t, buildErr)
	if override != "" {
		return override, filepath.Join(binDir, "llm-sim")
	}
	return filepath.Join(binDir, "k6"), filepath.Join(binDir, "llm-sim")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var listenLine = regexp.MustCompile(`llm-sim listening on (http://[0-9.:]+)`)

// startSim runs llm-sim on a free loopback port and returns its base URL.
func startSim(t *testing.T, args ...string) string {
	t.Helper()
	_, sim := binaries(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, sim, append([]string{"--addr", "127.0.0.1:0"}, args...)...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 5 * time.Second
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := listenLine.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case u := <-urls:
		return u
	case <-time.After(30 * time.Second):
		t.Fatal("llm-sim did not print its address within 30s")
		return ""
	}
}

// runK6 runs a script and returns k6's exit code and combined output.
func runK6(t *testing.T, script string, env map[string]string, extra ...string) (int, string) {
	t.Helper()
	return runK6Env(t, script, env, nil, extra...)
}

// runK6Env is runK6 with extra variables in k6's process environment (k6's
// own options, such as an output's settings), besides the script's -e ones.
func runK6Env(t *testing.T, script string, env map[string]string, procEnv []string, extra ...string) (int, string) {
	t.Helper()
	k6, _ := binaries(t)
	args := []string{"run", "--no-usage-report", "--no-color"}
	for k, v := range env {
		args = append(args, "-e", k+"="+v)
	}
	args = append(args, extra...)
	args = append(args, script)
	cmd := exec.Command(k6, args...)
	cmd.Dir = repoRoot(t)
	cmd.Env = append(append(os.Environ(), "K6_NO_USAGE_REPORT=true"), procEnv...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), string(out)
	}
	require.NoError(t, err, string(out))
	return 0, string(out)
}

// defaultSimArgs serve the models the examples name.
var defaultSimArgs = []string{"--model", "sim-large=demo", "--model", "sim-small=small", "--model", "sim-fast=fast", "--seed", "1"}

// simArgs reads the `// llm-sim: ARGS` line an example may start with: the
// simulator set-up it was written for (faults, profiles).
func simArgs(t *testing.T, script string) []string {
	t.Helper()
	data, err := os.ReadFile(script) //nolint:gosec // a repository file
	require.NoError(t, err)
	for _, line := range strings.SplitN(string(data), "\n", 5) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "// llm-sim:"); ok {
			return strings.Fields(rest)
		}
	}
	return defaultSimArgs
}

// onlyDispatchDelayCrossed is k6's message when llm_dispatch_delay's
// thresholds are the only ones crossed.
const onlyDispatchDelayCrossed = "thresholds on metrics 'llm_dispatch_delay' have been crossed"

// TestExamples runs every script in examples/ against a fresh llm-sim.
func TestExamples(t *testing.T) {
	scripts, err := filepath.Glob(filepath.Join(repoRoot(t), "examples", "*.js"))
	require.NoError(t, err)
	require.NotEmpty(t, scripts)
	for _, s := range scripts {
		name := filepath.Base(s)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url := startSim(t, simArgs(t, s)...)
			dir := t.TempDir()
			env := map[string]string{"LLM_BASE_URL": url + "/v1", "DURATION": "5s", "LLM_REPORT_DIR": dir}
			if name == "step-load.js" {
				// Five 12 s stages otherwise; TestDiagnosisScenarios runs it at
				// full length (the knee, and its page's stage charts).
				env["STEP"] = "3s"
			}
			code, out := runK6(t, filepath.Join("examples", name), env)
			if code == k6ThresholdsFailed && strings.Contains(out, onlyDispatchDelayCrossed) {
				// The generator's own lateness is what the machine's load
				// sets: beside other tests' k6 start-ups a quiet machine's
				// bound can be crossed, measured rightly. Once more; a
				// second crossing fails the example.
				t.Logf("%s: only llm_dispatch_delay's threshold crossed (a busy machine); once more", name)
				code, out = runK6(t, filepath.Join("examples", name), env)
			}
			require.Equal(t, 0, code, out)
			require.Contains(t, out, "llm_ttft")
			if name != "step-load.js" {
				checkReportLayout(t, name, dir)
			}
		})
	}
}

// TestViolatedThresholdFailsTheRun proves the thresholds are live: the same
// client with an impossible bound must make k6 exit with code 99.
func TestViolatedThresholdFailsTheRun(t *testing.T) {
	url := startSim(t, "--model", "sim-large=demo", "--seed", "1")
	script := filepath.Join(t.TempDir(), "impossible.js")
	require.NoError(t, os.WriteFile(script, []byte(`
import { Client } from 'k6/x/llmstream';
const client = new Client({ baseURL: __ENV.LLM_BASE_URL, model: 'sim-large' });
export const options = { iterations: 3, thresholds: { llm_ttft: ['p(95)<0.001'], llm_failed: ['rate<0.01'] } };
export default async function () {
  await client.chat({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 });
}
`), 0o600))
	code, out := runK6(t, script, map[string]string{"LLM_BASE_URL": url + "/v1"})
	require.Equal(t, k6ThresholdsFailed, code, out)
	require.True(t, strings.Contains(out, "llm_ttft"), out)
}

// TestSmokeScript runs scripts/smoke.js as the extension registry's check
// (`xk6 lint`) does: with no server and no options, the run must pass.
func TestSmokeScript(t *testing.T) {
	k6, _ := binaries(t)
	cmd := exec.Command(k6, "run", "--no-usage-report", "--quiet", filepath.Join("scripts", "smoke.js"))
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), "K6_NO_USAGE_REPORT=true")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), "classified as network")
}
