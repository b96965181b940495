package module

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// collect() configures, in the init context, which calls the report leaves
// out; every VU's init repeats it, so the same options are fine and other
// ones are an error, as is a misspelt option.
func TestCollectLeavesCallsOutByTagAndPairsByItem(t *testing.T) {
	t.Parallel()
	srv, _ := streamServer(t, 5*time.Millisecond, time.Millisecond, []string{"a", "b", "c"})
	root := New()
	init := fmt.Sprintf(`llm.collect({warmup: '0s', excludeScenarios: ['warmup'], excludeTags: {phase: 'warmup'}, minStage: '5s'});
		const client = new llm.Client({baseURL: %q, model: 'm1', name: 'a'});
		const other = new llm.Client({baseURL: %q, model: 'm2', name: 'b'});`, srv.URL+"/v1", srv.URL+"/v1")
	vu := newTestVUOn(t, root, init)
	// A second VU's init with the same options is fine.
	newTestVUOn(t, root, `llm.collect({excludeTags: {phase: 'warmup'}, excludeScenarios: ['warmup'], minStage: 5000})`)

	res := vu.chat(`{messages: [{role: 'user', content: 'hi'}]}, {tags: {phase: 'warmup'}}`)
	require.Equal(t, true, res["ok"], "%v", res["error"])
	item := `{id: 'item-7', category: 'short', messages: [{role: 'user', content: 'hi'}]}`
	res = vu.chat(`{messages: [{role: 'user', content: 'hi'}]}, {item: ` + item + `}`)
	require.Equal(t, true, res["ok"], "%v", res["error"])
	vu.run(`globalThis.res = undefined; other.chat({messages: [{role: 'user', content: 'hi'}]}, {item: ` + item + `}).then(r => { globalThis.res = r })`)

	run := root.report.Intake().Snapshot()
	require.EqualValues(t, 1, run.Excluded.ByReason["tag phase=warmup"], "%+v", run.Excluded)
	require.EqualValues(t, 2, run.Category("all").Requests)
	require.Equal(t, []string{"a", "b"}, run.Clients())
	require.Len(t, run.Paired(), 1)
	require.EqualValues(t, 1, run.Paired()[0].Pairs)
}

func TestCollectOptionErrors(t *testing.T) {
	t.Parallel()
	rt := newTestRuntime(t)
	_, err := rt.VU.Runtime().RunString(`const llm = require('k6/x/llmstream'); llm.collect({warmUp: '30s'})`)
	require.ErrorContains(t, err, "warmup")
	_, err = rt.VU.Runtime().RunString(`llm.collect({warmup: '-3s'})`)
	require.ErrorContains(t, err, "warmup must be a duration")
	_, err = rt.VU.Runtime().RunString(`llm.collect({minStage: 0})`)
	require.ErrorContains(t, err, "collect() options: minStage must be a duration above 0 like '10s', got 0",
		"a stage of no length is a mistake, not the default")
	_, err = rt.VU.Runtime().RunString(`llm.collect({warmup: '30s'}); llm.collect({warmup: '10s'})`)
	require.ErrorContains(t, err, "already called with other options")

	vu := newTestVU(t, ``)
	_, err = vu.rt.RunOnEventLoop(`llm.collect({warmup: '30s'})`)
	require.ErrorContains(t, err, "init context")
}
