package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// TestArchiveRunsAlone makes a `k6 archive` of examples/prompts-file.js (which
// loads examples/data/prompts.jsonl with Dataset.load), deletes the sources,
// and runs the archive from an empty directory against llm-sim: the script's
// thresholds need every category of the file drawn, so it passes only if the
// archive carried the dataset.
func TestArchiveRunsAlone(t *testing.T) {
	t.Parallel()
	k6, _ := binaries(t)
	root := repoRoot(t)
	src := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(src, "data"), 0o750))
	for _, f := range []string{"prompts-file.js", "data/prompts.jsonl"} {
		b, err := os.ReadFile(filepath.Join(root, "examples", f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(src, f), b, 0o600))
	}
	archive := filepath.Join(t.TempDir(), "llm-test.tar")
	cmd := exec.Command(k6, "archive", "--quiet", "-O", archive, "prompts-file.js") //nolint:gosec // test binary
	cmd.Dir = src
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	require.NoError(t, os.RemoveAll(src)) // nothing left to read but the archive

	empty := t.TempDir()
	moved := filepath.Join(empty, "llm-test.tar")
	require.NoError(t, os.Rename(archive, moved))
	url := startSim(t, simArgs(t, filepath.Join(root, "examples", "prompts-file.js"))...)
	run := exec.Command(k6, "run", "--no-usage-report", "--no-color", //nolint:gosec // test binary
		"-e", "LLM_BASE_URL="+url+"/v1", "-e", "DURATION=5s", "llm-test.tar")
	run.Dir = empty
	run.Env = append(os.Environ(), "K6_NO_USAGE_REPORT=true")
	out, err = run.CombinedOutput()
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), "llm_requests{category:write}", string(out))
	entries, err := os.ReadDir(empty)
	require.NoError(t, err)
	require.Len(t, entries, 1, "the run wrote into its directory")
}

// dockerStage is one stage of the repository's Dockerfile as stages of instructions.
type dockerStage struct {
	from  string
	lines []string
}

func dockerStages(t *testing.T) []dockerStage {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "Dockerfile"))
	require.NoError(t, err)
	text := strings.ReplaceAll(string(raw), "\\\n", " ")
	var stages []dockerStage
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "FROM "); ok {
			stages = append(stages, dockerStage{from: rest})
			continue
		}
		if len(stages) > 0 {
			stages[len(stages)-1].lines = append(stages[len(stages)-1].lines, line)
		}
	}
	return stages
}

// TestDockerfileBuildsWithTheMakefile checks what can be checked without a
// Docker daemon (none here, and base images cannot be pulled offline; the
// public workflow builds the image): the build stage runs `make k6 llm-sim`,
// whose Makefile targets write ./k6 and ./llm-sim with `go build`; its Go
// image is go.mod's Go version; the final stage copies exactly those two
// binaries and runs as a non-root user.
func TestDockerfileBuildsWithTheMakefile(t *testing.T) {
	root := repoRoot(t)
	stages := dockerStages(t)
	require.GreaterOrEqual(t, len(stages), 2, "a multi-stage build")
	build, final := stages[0], stages[len(stages)-1]
	require.Contains(t, build.from, " AS build")
	require.Contains(t, build.lines, "RUN make k6 llm-sim")

	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	require.NoError(t, err)
	for _, target := range []string{"k6", "llm-sim"} {
		re := regexp.MustCompile(`(?m)^` + target + `:[^\n]*\n\t\$\(GO\) build -trimpath -o ` + target + ` ./cmd/` + target + `$`)
		require.Regexp(t, re, string(mk), "the Makefile's %s target", target)
	}

	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	goVersion := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindStringSubmatch(string(gomod))
	require.NotNil(t, goVersion)
	df, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	require.NoError(t, err)
	require.Contains(t, string(df), "ARG GO_VERSION="+goVersion[1], "the build image's Go is go.mod's")

	require.Contains(t, final.lines, "COPY --from=build /src/k6 /src/llm-sim /usr/bin/")
	require.Contains(t, final.lines, `ENTRYPOINT ["k6"]`)
	var user string
	for _, l := range final.lines {
		if rest, ok := strings.CutPrefix(l, "USER "); ok {
			user = rest
		}
	}
	require.Regexp(t, `^[1-9][0-9]*$`, user, "the final image runs as a numeric non-root user")

	ignore, err := os.ReadFile(filepath.Join(root, ".dockerignore"))
	require.NoError(t, err)
	require.Contains(t, string(ignore), "node_modules")
}

// TestK6OperatorManifest reads deploy/k6-operator: a TestRun with several
// runners on this project's image as the Dockerfile's user, whose script is
// the archive that the kustomization turns into the ConfigMap it names.
func TestK6OperatorManifest(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "deploy", "k6-operator")
	var tr struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
		Spec       struct {
			Parallelism int `yaml:"parallelism"`
			Script      struct {
				ConfigMap struct{ Name, File string } `yaml:"configMap"`
			} `yaml:"script"`
			Arguments string `yaml:"arguments"`
			Runner    struct {
				Image string `yaml:"image"`
				Env   []struct {
					Name  string `yaml:"name"`
					Value string `yaml:"value"`
				} `yaml:"env"`
				SecurityContext struct {
					RunAsNonRoot bool `yaml:"runAsNonRoot"`
					RunAsUser    int  `yaml:"runAsUser"`
				} `yaml:"securityContext"`
			} `yaml:"runner"`
		} `yaml:"spec"`
	}
	readYAML(t, filepath.Join(dir, "testrun.yaml"), &tr)
	require.Equal(t, "k6.io/v1alpha1", tr.APIVersion)
	require.Equal(t, "TestRun", tr.Kind)
	require.Greater(t, tr.Spec.Parallelism, 1)
	require.NotEmpty(t, tr.Spec.Runner.Image)
	require.True(t, tr.Spec.Runner.SecurityContext.RunAsNonRoot)
	stages := dockerStages(t)
	require.Contains(t, stages[len(stages)-1].lines, "USER "+strconv.Itoa(tr.Spec.Runner.SecurityContext.RunAsUser))
	env := map[string]bool{}
	for _, e := range tr.Spec.Runner.Env {
		env[e.Name] = true
	}
	require.True(t, env["LLM_BASE_URL"], "the runners are told where the server is")

	var k struct {
		Resources          []string `yaml:"resources"`
		ConfigMapGenerator []struct {
			Name  string   `yaml:"name"`
			Files []string `yaml:"files"`
		} `yaml:"configMapGenerator"`
	}
	readYAML(t, filepath.Join(dir, "kustomization.yaml"), &k)
	require.Contains(t, k.Resources, "testrun.yaml")
	require.Len(t, k.ConfigMapGenerator, 1)
	require.Equal(t, tr.Spec.Script.ConfigMap.Name, k.ConfigMapGenerator[0].Name)
	require.Equal(t, []string{tr.Spec.Script.ConfigMap.File}, k.ConfigMapGenerator[0].Files)
}

// readYAML decodes a YAML file (a syntax error fails the test).
func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	f, err := os.Open(path) //nolint:gosec // a repository file
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	require.NoError(t, yaml.NewDecoder(f).Decode(into), path)
}
