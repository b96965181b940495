package module

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.k6.io/k6/js/modulestest"
)

// Capacity.search refuses bad input at init with an error naming the option.
func TestCapacitySearchBadInput(t *testing.T) {
	t.Parallel()
	const slo = `slo: {ttft: 'p95<2s'}`
	for code, want := range map[string]string{
		`{` + slo + `}`:                                                             "give rate: {min, max}",
		`{` + slo + `, rate: {min: 8, max: 2}}`:                                     "rate: the range is empty or inverted",
		`{` + slo + `, rate: {min: 2, max: 2}}`:                                     "rate: the range is empty or inverted",
		`{` + slo + `, concurrency: {min: 0, max: 8}}`:                              "concurrency: min must be a positive number",
		`{` + slo + `, rate: {min: 1, max: 8}, concurrency: {min: 1, max: 8}}`:      "not both",
		`{slo: {ttft: 'p100<2s'}, rate: {min: 1, max: 8}}`:                          `slo.ttft: "p100<2s": unknown percentile`,
		`{slo: {itl: 'p95<2s'}, rate: {min: 1, max: 8}}`:                            `slo.itl: unknown figure "itl"`,
		`{slo: {}, rate: {min: 1, max: 8}}`:                                         "slo: no objective",
		`{rate: {min: 1, max: 8}}`:                                                  "slo: no objective",
		`{slo: {e2e: 'p99<30s'}, rate: {min: 1, max: 8}}`:                           "window 20s is too short for the calls",
		`{` + slo + `, rate: {min: 1, max: 8}, window: '1s'}`:                       "window must be at least 3s",
		`{` + slo + `, rate: {min: 1, max: 8}, windo: '30s'}`:                       "windo",
		`{` + slo + `, concurrency: {min: 1, max: 8}, arrivals: 'poisson'}`:         "arrivals is for the open model",
		`{` + slo + `, rate: {min: 1, max: 8}, arrivals: 'gamma'}`:                  "arrivals must be 'poisson', 'constant' or 'bursty'",
		`{` + slo + `, rate: {min: 1, max: 8}, client: 'x'}`:                        "client must be a Client",
		`{` + slo + `, rate: {min: 1, max: 8}, clients: [{slo: {ttft: 'p95<1s'}}]}`: "clients[0].client is required",
	} {
		rt := modulestest.NewRuntime(t)
		require.NoError(t, rt.SetupModuleSystem(map[string]any{ImportPath: New()}, nil, nil))
		_, err := rt.VU.Runtime().RunString(`const llm = require('k6/x/llmstream'); llm.Capacity.search(` + code + `)`)
		require.ErrorContains(t, err, want, code)
		require.ErrorContains(t, err, "Capacity.search", code)
	}
}

// A good search gives the scenario its length and per-client objectives
// name the client. The length is the budget's windows at their longest: an
// error rate under 1 % passes only on 299 calls without a failure (0.99^299
// ≤ 5 %), five minutes at the lowest rate of 1 a second, so each of the 4
// windows may be lengthened to 451 s, each with its 10 s tail: 1 844 s.
func TestCapacitySearchOptions(t *testing.T) {
	t.Parallel()
	rt := modulestest.NewRuntime(t)
	require.NoError(t, rt.SetupModuleSystem(map[string]any{ImportPath: New()}, nil, nil))
	v, err := rt.VU.Runtime().RunString(`const llm = require('k6/x/llmstream');
const a = new llm.Client({baseURL: 'http://127.0.0.1:1', name: 'a'});
const s = llm.Capacity.search({rate: {min: 1, max: 8}, window: '10s', maxWindows: 4,
  clients: [{client: a, slo: {ttft: 'p95<1s', errors: '<1%'}}]});
const r = s.result();
[s.maxDuration(), s.model(), r.objectives.map(o => o.client + ':' + o.text).join(','), r.outcome].join(' ')`)
	require.NoError(t, err)
	require.Equal(t, "7256s rate a:errors <1%,a:ttft p95<1s unfinished", v.String())
}

// A trace as the search's arrivals: its options that the search sets are
// refused, as are synthetic arrivals beside it, the closed model and a trace
// with no rate; a good one is in the answer with its recorded mean rate.
func TestCapacitySearchOverATrace(t *testing.T) {
	t.Parallel()
	rows := `{"timestamp": 0, "input_length": 20, "output_length": 10, "hash_ids": [0]}
{"timestamp": 200, "input_length": 20, "output_length": 30, "hash_ids": [0]}
{"timestamp": 400, "input_length": 20, "output_length": 10, "hash_ids": [1]}
`
	files := map[string]string{"t.jsonl": rows, "one.jsonl": `{"timestamp": 0, "input_length": 20, "output_length": 10, "hash_ids": [0]}` + "\n"}
	const base = `slo: {ttft: 'p95<2s'}, window: '10s'`
	for code, want := range map[string]string{
		`{` + base + `, rate: {min: 1, max: 8}, trace: llm.Schedule.trace('t.jsonl', {rateScale: 2})}`:              "rateScale is the search's",
		`{` + base + `, rate: {min: 1, max: 8}, trace: llm.Schedule.trace('t.jsonl', {loop: true, loopFor: '1m'})}`: "loop and loopFor are the search's",
		`{` + base + `, rate: {min: 1, max: 8}, arrivals: 'constant', trace: llm.Schedule.trace('t.jsonl')}`:        "give trace or arrivals/seed",
		`{` + base + `, concurrency: {min: 1, max: 8}, trace: llm.Schedule.trace('t.jsonl')}`:                       "trace is for the open model",
		`{` + base + `, rate: {min: 1, max: 8}, trace: 't.jsonl'}`:                                                  "trace must be a Schedule.trace",
		`{` + base + `, rate: {min: 1, max: 8}, trace: llm.Schedule.constant({rate: 1, duration: '1m'})}`:           "trace must be a Schedule.trace",
		`{` + base + `, rate: {min: 1, max: 8}, trace: llm.Schedule.trace('one.jsonl')}`:                            "has no mean rate",
	} {
		err := initError(t, files, `llm.Capacity.search(`+code+`)`)
		require.Contains(t, err, want, code)
		require.Contains(t, err, "Capacity.search", code)
	}
	vu := newDatasetVU(t, New(), files, `
const s = llm.Capacity.search({`+base+`, rate: {min: 1, max: 8}, trace: llm.Schedule.trace('t.jsonl')});
globalThis.answer = s.result().trace;`)
	v, err := vu.rt.VU.Runtime().RunString(`[answer.name, answer.rows, answer.mean_rate, answer.scale].join(' ')`)
	require.NoError(t, err)
	require.Equal(t, "t.jsonl 3 5 ", v.String(), "no capacity yet: no speed-up")
}
