package module

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// A tool past its timeout fails the job with tool_timeout, whatever the
// tool: an async one whose promise never settles (no longer awaited), a
// canned latency longer than the timeout (cut at it), a synchronous one
// that returns late (judged when it returns). Within its timeout a tool
// answers as usual.
func TestAgentToolTimeout(t *testing.T) {
	base, _ := startSimBodies(t, nil)
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, model: 'sim'});
		const busy = (ms) => { const t = Date.now(); while (Date.now() - t < ms) {} };
		const agent = (tool) => client.agent({body: {max_tokens: 40}, params: {headers: {'X-Sim-Tool-Calls': '1'}}, tools: {f: tool}});`, base))
	vu.run(`(async () => {
		globalThis.jobs = {};
		jobs.never = await agent({run: () => new Promise(() => {}), timeout: '50ms'}).run('q');
		jobs.canned = await agent({result: 'x', latency: '2s', timeout: '50ms'}).run('q');
		jobs.sync = await agent({run: () => { busy(40); return 'x'; }, timeout: '10ms'}).run('q');
		jobs.fine = await agent({run: async () => 'x', timeout: '1s'}).run('q');
	})()`)
	jobs := vu.rt.VU.Runtime().Get("jobs").Export().(map[string]any)
	for _, name := range []string{"never", "canned", "sync"} {
		j := jobs[name].(map[string]any)
		require.Equal(t, false, j["ok"], name)
		e := j["error"].(map[string]any)
		require.Equal(t, "tool_timeout", e["type"], name)
		require.Equal(t, "f", e["tool"], name)
		require.Equal(t, "tool_timeout", j["endReason"], name)
	}
	require.Less(t, jobs["canned"].(map[string]any)["duration"].(float64), 2000.0, "the canned latency cut at the timeout")
	fine := jobs["fine"].(map[string]any)
	require.Equal(t, true, fine["ok"], fine["error"])
	vu.closeIdle()
}

func TestAgentToolTimeoutOptionErrors(t *testing.T) {
	t.Parallel()
	vu := newTestVU(t, `const client = new llm.Client({baseURL: 'http://127.0.0.1:1'});`)
	for code, want := range map[string]string{
		`client.agent({tools: {f: {run: () => 1, timeout: 'soon'}}})`: "tools.f.timeout must be a positive duration",
		`client.agent({tools: {f: {result: 'x', timeout: 0}}})`:       "tools.f.timeout must be a positive duration",
	} {
		_, err := vu.rt.VU.Runtime().RunString(code)
		require.ErrorContains(t, err, want, code)
	}
}
