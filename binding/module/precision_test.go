package module

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Precision.until refuses bad input at init, naming the option.
func TestPrecisionUntilBadInput(t *testing.T) {
	t.Parallel()
	for code, want := range map[string]string{
		`{ttft: 'p95'}`:                       "want a percentile and a margin",
		`{latency: 'p95±5%'}`:                 `unknown figure "latency"`,
		`{}`:                                  "no target",
		`{ttft: 'p95±5%'}, {cap: 0}`:          "cap",
		`{ttft: 'p95±5%'}, {cap: '1m', x: 1}`: "x",
	} {
		rt := newTestRuntime(t)
		_, err := rt.VU.Runtime().RunString(`const llm = require('k6/x/llmstream'); llm.Precision.until(` + code + `)`)
		require.ErrorContains(t, err, want, code)
		require.ErrorContains(t, err, "Precision.until", code)
	}
}

// A VU looping on the gate stops by itself once the target is known: the
// loop ends with fewer calls than its safety bound, at least as many as a
// bounded p50 needs, and the report's record says the gate was met.
func TestPrecisionGateEndsTheLoop(t *testing.T) {
	t.Parallel()
	srv, _ := streamServer(t, 2*time.Millisecond, time.Millisecond, []string{"a", "b", "c"})
	vu := newTestVU(t, `
const client = new llm.Client({baseURL: '`+srv.URL+`', model: 'm'});
const gate = llm.Precision.until({ttfb: 'p50±50%'}, {cap: '1m'});`)
	vu.run(`globalThis.calls = 0;
(async () => { while (gate.next() !== null && calls < 2000) { await client.chat({messages: [{role: 'user', content: 'hi'}]}); calls++; } })()`)
	calls := vu.rt.VU.Runtime().Get("calls").ToInteger()
	require.Less(t, calls, int64(2000), "the gate never closed")
	require.GreaterOrEqual(t, calls, int64(6), "a p50 is bounded by no fewer calls")
	res := vu.run(`JSON.stringify(gate.result())`).String()
	require.Contains(t, res, `"outcome":"met"`)
	require.Contains(t, res, `"target":"ttfb p50±50%"`)
	require.Contains(t, res, `"met":true`)
}
