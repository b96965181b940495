package module

import (
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.k6.io/k6/js/modulestest"
	"go.k6.io/k6/lib/fsext"
)

// traceInit runs code in an init context whose script sits in dir, over
// k6's own file system for scripts (the disk behind a cache layer that keeps
// every file read, which is what `k6 archive` packs); it returns the cache
// layer, the result and the error.
func traceInit(t *testing.T, dir, code string) (fsext.Fs, any, error) {
	t.Helper()
	rt := modulestest.NewRuntime(t)
	layer := fsext.NewMemMapFs()
	rt.VU.InitEnvField.FileSystems = map[string]fsext.Fs{"file": fsext.NewCacheOnReadFs(fsext.NewOsFs(), layer, 0)}
	rt.VU.InitEnvField.CWD = &url.URL{Scheme: "file", Path: filepath.ToSlash(dir) + "/"}
	require.NoError(t, rt.SetupModuleSystem(map[string]any{ImportPath: New()}, nil, nil))
	v, err := rt.VU.Runtime().RunString(`const llm = require('k6/x/llmstream');` + code)
	if err != nil {
		return layer, nil, err
	}
	return layer, v.Export(), nil
}

const mooncakeRowsText = `{"timestamp": 0, "input_length": 1200, "output_length": 20, "hash_ids": [0, 1, 2]}
{"timestamp": 0, "input_length": 700, "output_length": 5, "hash_ids": [0, 3]}
{"timestamp": 350, "input_length": 512, "output_length": 10, "hash_ids": [4]}
{"timestamp": 1200, "input_length": 1500, "output_length": 30, "hash_ids": [0, 1, 5]}
`

func writeTrace(t *testing.T, dir, name, text string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o750))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600))
}

// fromDisk reads the trace relative to the script as open() would, the same
// rows as through k6's file system, and leaves k6 no copy of the text.
func TestTraceFromDiskKeepsNoCopy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTrace(t, dir, "traces/m.jsonl", mooncakeRowsText)
	abs := filepath.ToSlash(filepath.Join(dir, "traces", "m.jsonl"))
	info := `const i = t.info(); JSON.stringify([i.format, i.rows, i.span, i.prefixReuse, i.summary])`

	layer, viaK6, err := traceInit(t, dir, `const t = llm.Schedule.trace('traces/m.jsonl');`+info)
	require.NoError(t, err)
	kept, err := fsext.Exists(layer, abs)
	require.NoError(t, err)
	require.True(t, kept, "k6 keeps a file its init context read (for k6 archive)")

	layer, direct, err := traceInit(t, dir, `const t = llm.Schedule.trace('traces/m.jsonl', { fromDisk: true });`+info)
	require.NoError(t, err)
	kept, err = fsext.Exists(layer, abs)
	require.NoError(t, err)
	require.False(t, kept, "fromDisk: k6 holds no copy")
	require.Equal(t, viaK6, direct)
	require.Contains(t, direct, `"mooncake",4,1.2`)
}

func TestTraceFromDiskBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTrace(t, dir, "bad.jsonl", `{"timestamp": 0, "input_length": 10, "output_length": 1, "hash_ids": [1]}
{"timestamp": 5, "input_length": 10, "output_length": 1}
`)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "folder"), 0o750))
	for _, c := range []struct{ code, want string }{
		{`llm.Schedule.trace('bad.jsonl', { fromDisk: true })`, `trace bad.jsonl line 2: missing "hash_ids"`},
		{`llm.Schedule.trace('nowhere.jsonl', { fromDisk: true })`, "`k6 archive`, k6 Cloud and k6-operator do not carry it"},
		{`llm.Schedule.trace('folder', { fromDisk: true })`, "is a folder"},
		{`llm.Schedule.trace('bad.jsonl', { fromDisk: 'yes' })`, "fromDisk"},
	} {
		_, _, err := traceInit(t, dir, c.code)
		require.Error(t, err, c.code)
		require.Contains(t, err.Error(), c.want, c.code)
		require.Contains(t, err.Error(), "Schedule.trace", c.code)
	}
}
