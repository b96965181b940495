package module

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.k6.io/k6/lib"
	"go.k6.io/k6/lib/executor"
	"go.k6.io/k6/lib/types"
	"gopkg.in/guregu/null.v3"
)

// The run record says how the run was made — k6's load shape, the dataset,
// each client's protocol, model and host (never its credentials) — and a
// report against a baseline made differently says so before the verdicts.
func TestRunRecordSaysHowTheRunWasMade(t *testing.T) {
	t.Parallel()
	srv, _ := streamServer(t, 0, time.Millisecond, []string{"a", "b"})
	host := strings.TrimPrefix(srv.URL, "http://")
	vu := newTestVU(t, `const client = new llm.Client({name: 'chat', model: 'm1',
		baseURL: 'http://user:sk-basic@`+host+`/v1?api-key=sk-query', headers: {Authorization: 'Bearer sk-header'}});
		const d = llm.Dataset.synthetic({seed: 7, variants: 10, mix: {short: 1}});`)
	sc := executor.NewConstantVUsConfig("default")
	sc.VUs = null.IntFrom(50)
	sc.Duration = types.NullDurationFrom(30 * time.Second)
	vu.state().Options.Scenarios = lib.ScenarioConfigs{"default": sc}
	vu.chat(`{messages: [{role: 'user', content: d.next().prompt}]}`)

	raw := vu.run(`llm.report(null, {json: 'run.json', stdout: false})['run.json']`).String()
	require.NotContains(t, raw, "sk-", "a credential reached the run record")
	var rec struct {
		Run struct {
			Load     map[string]map[string]any `json:"load"`
			Clients  []map[string]any          `json:"clients"`
			Datasets []map[string]any          `json:"datasets"`
			Versions string                    `json:"module_version"`
		} `json:"run"`
	}
	require.NoError(t, json.Unmarshal([]byte(raw), &rec))
	require.Equal(t, "constant-vus", rec.Run.Load["default"]["executor"])
	require.InDelta(t, 50, rec.Run.Load["default"]["vus"], 0)
	require.Equal(t, []map[string]any{{"name": "chat", "protocol": "openai-chat", "model": "m1", "host": srv.URL}}, rec.Run.Clients)
	require.Len(t, rec.Run.Datasets, 1)
	require.Equal(t, "synthetic", rec.Run.Datasets[0]["source"])
	require.InDelta(t, 7, rec.Run.Datasets[0]["options"].(map[string]any)["seed"], 0) //nolint:forcetypeassert
	require.Equal(t, Version, rec.Run.Versions)

	// The baseline ran 20 VUs against another model.
	var base map[string]any
	require.NoError(t, json.Unmarshal([]byte(raw), &base))
	run := base["run"].(map[string]any)                                  //nolint:forcetypeassert
	run["load"].(map[string]any)["default"].(map[string]any)["vus"] = 20 //nolint:forcetypeassert
	run["clients"].([]any)[0].(map[string]any)["model"] = "m0"           //nolint:forcetypeassert
	path := filepath.Join(t.TempDir(), "base.json")
	b, err := json.Marshal(base)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o600))
	out := vu.run(`llm.report(null, {baseline: '` + filepath.ToSlash(path) + `', json: 'run.json'})`).Export().(map[string]any) //nolint:forcetypeassert
	require.Contains(t, out["stdout"], "baseline differs (this run vs baseline): clients.chat.model m1 vs m0; load.default.vus 50 vs 20")
	require.Contains(t, out["run.json"], `"load.default.vus 50 vs 20"`)

	// A record of a format this version cannot read is refused, naming the file and the format.
	require.NoError(t, os.WriteFile(path, []byte(`{"format": 7, "categories": {}}`), 0o600))
	_, err = vu.rt.RunOnEventLoop(`llm.report(null, {baseline: '` + filepath.ToSlash(path) + `'})`)
	require.ErrorContains(t, err, path+" is a run record of format 7")
}
