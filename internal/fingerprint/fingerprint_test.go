package fingerprint

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"path"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

const script = `import { Client } from 'k6/x/llmstream';
const c = new Client({ baseURL: __ENV.URL, model: 'm' });
export default () => c.chat({ messages: [{ role: 'user', content: 'Tell me a story' }], max_tokens: 64 });
`

// testFS is a test's files as an instance keeps them under dir.
func testFS(dir, scriptText string) fstest.MapFS {
	return fstest.MapFS{
		dir + "/test.js":                {Data: []byte(scriptText)},
		dir + "/lib/prompts.json":       {Data: []byte(`["a","b"]`)},
		dir + "/baseline.json":          {Data: []byte(`{"format":2}`)},
		path.Dir(dir) + "/data/c.jsonl": {Data: []byte("{}\n")}, // beside the test's directory
	}
}

func client(t *testing.T, o map[string]any) *config.Client {
	t.Helper()
	base := map[string]any{"baseURL": "http://127.0.0.1:8000/v1", "model": "m", "name": "chat"}
	for k, v := range o {
		base[k] = v
	}
	c, err := config.ParseClient(base)
	require.NoError(t, err)
	return c
}

// instance gathers one instance's inputs: dir is where it keeps the test,
// the rest is its own (key, tags) or the test's (script, model, options).
type instance struct {
	dir, script, model, apiKey, tag, sequence string
	vus                                       int
	digest                                    string // the data file's
}

func (in instance) inputs(t *testing.T) Inputs {
	t.Helper()
	files, err := Files(testFS(in.dir, in.script), in.dir, func(name string) bool { return name == in.dir+"/baseline.json" })
	require.NoError(t, err)
	c := client(t, map[string]any{"model": in.model, "apiKey": in.apiKey, "tags": map[string]any{"instance": in.tag},
		"headers": map[string]any{"Authorization": "Bearer " + in.apiKey, "X-Route": "blue"}})
	d, err := ClientDigest(c, "")
	require.NoError(t, err)
	return Inputs{
		Files:     files,
		K6Options: map[string]any{"scenarios": map[string]any{"default": map[string]any{"executor": "constant-vus", "vus": in.vus}}},
		Clients:   []Client{{Label: "chat", Digest: d}},
		Datasets: []runrecord.DatasetInfo{{Source: "prompts.jsonl", Items: 2, Digest: in.digest},
			{Source: "synthetic", Options: map[string]any{"seed": 1.0}, Items: 4}},
		SegmentSequence: in.sequence,
	}
}

func of(t *testing.T, in instance) *runrecord.Fingerprint {
	t.Helper()
	fp, err := Of(in.inputs(t))
	require.NoError(t, err)
	return fp
}

var one = instance{dir: "home/alice/test", script: script, model: "m", apiKey: "sk-alice-0123456789", tag: "a",
	sequence: "0,1/2,1", vus: 8, digest: "d1"}

// Two instances of one test agree although each keeps it in its own
// directory, with its own key and its own tags, and creates its data sets in
// another order.
func TestInstancesOfOneTestShareTheFingerprint(t *testing.T) {
	other := one
	other.dir, other.apiKey, other.tag = "tmp/run", "sk-bob-9876543210", "b"
	a, b := of(t, one), of(t, other)
	require.Equal(t, a.Digest, b.Digest)
	assert.Empty(t, runrecord.FingerprintDifferences(a, b))
	assert.Equal(t, []string{"../data/c.jsonl", "lib/prompts.json", "test.js"}, keys(a.Files),
		"paths relative to the script's directory; the skipped baseline left out")

	in := other.inputs(t)
	in.Datasets[0], in.Datasets[1] = in.Datasets[1], in.Datasets[0]
	swapped, err := Of(in)
	require.NoError(t, err)
	assert.Equal(t, a.Digest, swapped.Digest, "the data sets' order is the script's, not the test's")
}

// Two tests that only look alike (same scenarios and clients) differ, and
// the differences say in what.
func TestDifferentTestsDifferAndSayWhere(t *testing.T) {
	for name, c := range map[string]struct {
		mod  func(*instance)
		want []string
	}{
		"other prompt": {func(i *instance) { i.script = script[:len(script)-40] + "'Write a poem' }], max_tokens: 64 });\n" },
			[]string{"file test.js differs ("}},
		"other max_tokens": {func(i *instance) { i.script = script[:len(script)-7] + "512 });\n" },
			[]string{"file test.js differs ("}},
		"other model":    {func(i *instance) { i.model = "big" }, []string{"client chat differs ("}},
		"other vus":      {func(i *instance) { i.vus = 9 }, []string{"k6's options (scenarios, thresholds) differ"}},
		"other data":     {func(i *instance) { i.digest = "d2" }, []string{"the data sets differ (source, options or content)"}},
		"other sequence": {func(i *instance) { i.sequence = "0,1/3,2/3,1" }, []string{`execution segment sequence 0,1/2,1 vs 0,1/3,2/3,1`}},
	} {
		other := one
		c.mod(&other)
		a, b := of(t, one), of(t, other)
		require.NotEqual(t, a.Digest, b.Digest, name)
		d := runrecord.FingerprintDifferences(a, b)
		require.Len(t, d, len(c.want), "%s: %v", name, d)
		for i := range d {
			assert.Contains(t, d[i], c.want[i], name)
		}
	}
}

func TestFilesDigestTheBytes(t *testing.T) {
	files, err := Files(fstest.MapFS{"t/test.js": {Data: []byte(script)}, "t": {Mode: 0o755 | 1<<31}}, "/t/", nil)
	require.NoError(t, err)
	sum := sha256.Sum256([]byte(script))
	assert.Equal(t, map[string]string{"test.js": hex.EncodeToString(sum[:])}, files)
	for base, want := range map[string]string{"": "a/b.js", ".": "a/b.js", "a": "b.js", "a/b": "../b.js", "c/d": "../../a/b.js"} {
		assert.Equal(t, want, relative(base, "a/b.js"), base)
	}
	assert.Equal(t, "-", relative("home/alice", "-"), "a script from standard input, wherever k6 was started")
}

// The digest of a Client leaves out what is the instance's own, and keeps
// what changes the calls.
func TestClientDigestLeavesSecretsOut(t *testing.T) {
	sm := func(auth string) map[string]any {
		return map[string]any{"url": "http://127.0.0.1:9000/metrics?token=" + auth, "headers": map[string]any{"Authorization": auth}}
	}
	base := map[string]any{"apiKey": "sk-a", "headers": map[string]any{"x-api-key": "k-a", "X-Route": "blue"},
		"serverMetrics": sm("s-a"), "baseURL": "http://u:p-a@127.0.0.1:8000/v1?key=q-a", "tags": map[string]any{"i": "1"}}
	digest := func(mod map[string]any) string {
		o := map[string]any{}
		for k, v := range base {
			o[k] = v
		}
		for k, v := range mod {
			o[k] = v
		}
		d, err := ClientDigest(client(t, o), "")
		require.NoError(t, err)
		return d
	}
	ref := digest(nil)
	for name, mod := range map[string]map[string]any{
		"api key":       {"apiKey": "sk-b"},
		"header key":    {"headers": map[string]any{"x-api-key": "k-b", "X-Route": "blue"}},
		"metrics creds": {"serverMetrics": sm("s-b")},
		"url secrets":   {"baseURL": "http://u:p-b@127.0.0.1:8000/v1?key=q-b"},
		"tags":          {"tags": map[string]any{"i": "2"}},
	} {
		assert.Equal(t, ref, digest(mod), name)
	}
	for name, mod := range map[string]map[string]any{
		"model":         {"model": "other"},
		"route header":  {"headers": map[string]any{"x-api-key": "k-a", "X-Route": "green"}},
		"no key header": {"headers": map[string]any{"X-Route": "blue"}},
		"timeouts":      {"timeouts": map[string]any{"firstToken": "5s"}},
		"protocol":      {"protocol": "anthropic"},
		"host":          {"baseURL": "http://u:p-a@127.0.0.2:8000/v1?key=q-a"},
	} {
		assert.NotEqual(t, ref, digest(mod), name)
	}
	withFallback, err := ClientDigest(client(t, base), "spare")
	require.NoError(t, err)
	assert.NotEqual(t, ref, withFallback, "a fallback client")
}

func keys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
