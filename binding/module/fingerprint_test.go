package module

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.k6.io/k6/js/modulestest"
	"go.k6.io/k6/lib"
	"go.k6.io/k6/lib/executor"
	"go.k6.io/k6/lib/fsext"
	"gopkg.in/guregu/null.v3"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// fingerprintScript is a test's script; body is what its calls send. Each
// instance gives its own key and tag in its environment.
func fingerprintScript(host, body string) string {
	return `const client = new llm.Client({name: 'chat', model: 'm1', baseURL: 'http://` + host + `/v1',
		apiKey: __ENV.KEY, tags: {instance: __ENV.TAG}});
	const t = llm.Schedule.trace('traces/m.jsonl', {fromDisk: true});
	llm.loadBaseline('base.json');
	globalThis.body = ` + body + `;`
}

// instanceRun runs one k6 instance of a test kept in a directory of its own
// (k6 reads the script through its file system first, as its loader does)
// and returns its run record.
func instanceRun(t *testing.T, host, key, tag, body string) *runrecord.Record {
	t.Helper()
	dir := t.TempDir()
	script := fingerprintScript(host, body)
	writeTrace(t, dir, "test.js", script)
	writeTrace(t, dir, "traces/m.jsonl", mooncakeRowsText)
	base, err := os.ReadFile("../../internal/report/testdata/record-format1.json")
	require.NoError(t, err)
	writeTrace(t, dir, "base.json", string(base))
	files := fsext.NewCacheOnReadFs(fsext.NewOsFs(), fsext.NewMemMapFs(), 0)
	_, err = fsext.ReadFile(files, filepath.ToSlash(filepath.Join(dir, "test.js")))
	require.NoError(t, err)
	vu := newTestVUWith(t, New(), func(rt *modulestest.Runtime) {
		rt.VU.InitEnvField.FileSystems = map[string]fsext.Fs{"file": files}
		rt.VU.InitEnvField.CWD = &url.URL{Scheme: "file", Path: filepath.ToSlash(dir) + "/"}
		require.NoError(t, rt.VU.Runtime().Set("__ENV", map[string]string{"KEY": key, "TAG": tag}))
	}, script)
	sc := executor.NewConstantVUsConfig("default")
	sc.VUs = null.IntFrom(4)
	vu.state().Options.Scenarios = lib.ScenarioConfigs{"default": sc}
	vu.chat(`body`)
	raw := vu.run(`llm.report(null, {json: 'run.json', stdout: false})['run.json']`).String()
	require.NotContains(t, raw, key, "a credential reached the run record")
	rec, err := runrecord.ParseRecord("run.json", []byte(raw))
	require.NoError(t, err)
	require.NotNil(t, rec.Run)
	require.NotNil(t, rec.Run.Fingerprint, "a record carries its test's fingerprint")
	return rec
}

// Two instances of one test, each in its own directory with its own key and
// tag, share the fingerprint; a test with another max_tokens in its script
// does not, and the difference names the script.
func TestTheRecordCarriesTheTestsFingerprint(t *testing.T) {
	t.Parallel()
	srv, _ := streamServer(t, 0, time.Millisecond, []string{"a", "b"})
	host := strings.TrimPrefix(srv.URL, "http://")
	body := `{messages: [{role: 'user', content: 'Tell me a story'}], max_tokens: 64}`
	a := instanceRun(t, host, "sk-alice-0123456789", "a", body)
	b := instanceRun(t, host, "sk-bob-9876543210", "b", body)
	fa, fb := a.Run.Fingerprint, b.Run.Fingerprint
	assert.Equal(t, fa.Digest, fb.Digest, "%v", runrecord.FingerprintDifferences(fa, fb))
	assert.ElementsMatch(t, []string{"test.js"}, keys(fa.Files),
		"the script by its path beside itself; the baseline left out, the fromDisk trace not read through k6")
	assert.Contains(t, fa.Clients, "chat")
	assert.NotEmpty(t, fa.Options, "k6's scenarios")
	require.Len(t, a.Run.Datasets, 1, "the trace is a data set of the run")
	assert.Equal(t, "traces/m.jsonl", a.Run.Datasets[0].Source)
	assert.Equal(t, 4, a.Run.Datasets[0].Items)
	assert.Len(t, a.Run.Datasets[0].Digest, 64)

	other := instanceRun(t, host, "sk-alice-0123456789", "a",
		`{messages: [{role: 'user', content: 'Tell me a story'}], max_tokens: 512}`)
	d := runrecord.FingerprintDifferences(fa, other.Run.Fingerprint)
	require.Len(t, d, 1)
	assert.Contains(t, d[0], "file test.js differs")
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
