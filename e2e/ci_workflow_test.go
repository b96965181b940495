package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// workflow is the part of a GitHub Actions workflow the tests read.
type workflow struct {
	Name string            `yaml:"name"`
	On   map[string]any    `yaml:"on"`
	Env  map[string]string `yaml:"env"`
	Jobs map[string]struct {
		RunsOn string `yaml:"runs-on"`
		Steps  []struct {
			Name            string            `yaml:"name"`
			Uses            string            `yaml:"uses"`
			Run             string            `yaml:"run"`
			Shell           string            `yaml:"shell"`
			If              string            `yaml:"if"`
			ContinueOnError bool              `yaml:"continue-on-error"`
			With            map[string]string `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// TestWorkflowsParse reads every workflow of the repository: the user's
// example and the project's own CI. Each must be valid YAML with triggers and
// jobs whose steps each use an action or run a command.
func TestWorkflowsParse(t *testing.T) {
	root := repoRoot(t)
	files, err := filepath.Glob(filepath.Join(root, ".github", "workflows", "*.yml"))
	require.NoError(t, err)
	files = append(files, filepath.Join(root, "examples", "ci", "github-actions.yml"))
	for _, f := range files {
		var wf workflow
		readYAML(t, f, &wf)
		require.NotEmpty(t, wf.On, "%s: no trigger", f)
		require.NotEmpty(t, wf.Jobs, "%s: no job", f)
		for name, job := range wf.Jobs {
			require.NotEmpty(t, job.RunsOn, "%s: job %s", f, name)
			require.NotEmpty(t, job.Steps, "%s: job %s", f, name)
			for i, s := range job.Steps {
				require.True(t, (s.Uses == "") != (s.Run == ""), "%s: job %s step %d (%s) must use an action or run a command", f, name, i, s.Name)
			}
		}
	}
}

// TestUserCIWorkflow runs the example workflow's own shell steps, as GitHub's
// `shell: bash` does (bash -eo pipefail), against llm-sim: the load test
// writes the HTML report and run record the upload step names; a passing run
// becomes the baseline that the next run loads; and a crossed threshold fails
// the step, which is what gates the job.
func TestUserCIWorkflow(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	var wf workflow
	readYAML(t, filepath.Join(root, "examples", "ci", "github-actions.yml"), &wf)
	job, ok := wf.Jobs["load-test"]
	require.True(t, ok)
	steps := map[string]string{}
	var uploads, cacheKeys []string
	for _, s := range job.Steps {
		switch {
		case strings.HasPrefix(s.Uses, "actions/upload-artifact@"):
			require.Equal(t, "always()", s.If, "the report is uploaded even when a threshold failed")
			uploads = append(uploads, strings.Fields(s.With["path"])...)
		case strings.HasPrefix(s.Uses, "actions/cache/"):
			cacheKeys = append(cacheKeys, s.With["key"])
		case s.Run != "":
			require.Equal(t, "bash", s.Shell, "step %q: shell bash adds pipefail (k6's exit code survives tee)", s.Name)
			require.False(t, s.ContinueOnError, "step %q must gate the job", s.Name)
			steps[s.Name] = s.Run
		}
	}
	dir := wf.Env["LLM_REPORT_DIR"]
	require.Subset(t, uploads, []string{dir + "/report.html", dir + "/report.json"})
	require.Len(t, cacheKeys, 2, "a baseline restored and saved")
	require.Equal(t, cacheKeys[0], cacheKeys[1], "saved under the key it is restored from")
	require.FileExists(t, filepath.Join(root, wf.Env["LLM_SCRIPT"]))

	k6, _ := binaries(t)
	url := startSim(t, defaultSimArgs...)
	work := t.TempDir()
	step := func(name, script string) (int, string) {
		t.Helper()
		body, ok := steps[name]
		require.True(t, ok, "no step %q", name)
		cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", body)
		cmd.Dir = work
		cmd.Env = append(os.Environ(),
			"PATH="+filepath.Dir(k6)+string(os.PathListSeparator)+os.Getenv("PATH"),
			"LLM_SCRIPT="+script, "LLM_BASE_URL="+url+"/v1", "LLM_REPORT_DIR="+dir,
			"DURATION=6s", "K6_NO_USAGE_REPORT=true")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), string(out)
		}
		require.NoError(t, err, string(out))
		return 0, string(out)
	}
	script := filepath.Join(root, wf.Env["LLM_SCRIPT"])

	code, out := step("load test", script)
	require.Equal(t, 0, code, out)
	for _, f := range []string{"report.html", "report.json", "summary.txt"} {
		require.FileExists(t, filepath.Join(work, dir, f))
	}
	baselineLine := regexp.MustCompile(`(?m)^\s+baseline[ :(]`) // the report's comparison
	require.NotRegexp(t, baselineLine, out, "the first run has no baseline")

	code, out = step("keep this run as the baseline", script)
	require.Equal(t, 0, code, out)
	require.FileExists(t, filepath.Join(work, "llm-baseline", "report.json"))

	code, out = step("load test", script)
	require.Equal(t, 0, code, out)
	require.Regexp(t, baselineLine, out, "the second run compares itself with the baseline")

	impossible := filepath.Join(t.TempDir(), "impossible.js")
	require.NoError(t, os.WriteFile(impossible, []byte(`
import { Client } from 'k6/x/llmstream';
const client = new Client({ baseURL: __ENV.LLM_BASE_URL, model: 'sim-large' });
export const options = { iterations: 2, thresholds: { llm_ttft: ['p(95)<0.001'] } };
export default async function () {
  await client.chat({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 });
}
`), 0o600))
	code, out = step("load test", impossible)
	require.Equal(t, k6ThresholdsFailed, code, "a crossed threshold fails the step:\n%s", out)
}
