package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// k6's --system-tags decides the tags k6 defines on the module's samples, as
// on http_req_*: with status,name the llm_ttft points carry status and name
// and no proto; the module's own tags (protocol) stay.
func TestSystemTagsTrimK6DefinedTags(t *testing.T) {
	url := startSim(t, defaultSimArgs...)
	dir := t.TempDir()
	script := filepath.Join(dir, "tags.js")
	require.NoError(t, os.WriteFile(script, []byte(`import { Client } from 'k6/x/llmstream';
const client = new Client({ baseURL: __ENV.LLM_BASE_URL, model: 'sim-fast', name: 'sim' });
export const options = { iterations: 3 };
export default async function () {
  await client.chat({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 });
}
`), 0o600))
	out := filepath.Join(dir, "out.json")
	code, log := runK6(t, script, map[string]string{"LLM_BASE_URL": url + "/v1"},
		"--system-tags=status,name", "--out", "json="+out)
	require.Equal(t, 0, code, log)

	f, err := os.Open(out) //nolint:gosec // the test's own file
	require.NoError(t, err)
	defer f.Close() //nolint:errcheck // read only
	points := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct {
			Type   string
			Metric string
			Data   struct{ Tags map[string]string }
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &line))
		if line.Type != "Point" || line.Metric != "llm_ttft" {
			continue
		}
		points++
		tags := line.Data.Tags
		require.NotContains(t, tags, "proto", "proto is not in --system-tags")
		require.Equal(t, "200", tags["status"])
		require.Equal(t, "sim", tags["name"])
		require.NotEmpty(t, tags["protocol"], "the module's own tags stay")
	}
	require.NoError(t, sc.Err())
	require.Equal(t, 3, points, "one llm_ttft point per call")
}
