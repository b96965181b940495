package module

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Each bad agent option is refused when the agent is made, naming it.
func TestAgentOptionErrors(t *testing.T) {
	t.Parallel()
	vu := newTestVU(t, `const client = new llm.Client({baseURL: 'http://127.0.0.1:1'});
const tgi = new llm.Client({baseURL: 'http://127.0.0.1:1', protocol: 'tgi'});`)
	for code, want := range map[string]string{
		`client.agent()`:                                             "options are required",
		`client.agent({})`:                                           "tools is required",
		`client.agent({tools: {}})`:                                  "at least one tool",
		`client.agent({tools: {f: 3}})`:                              "tools.f must be a function or {result} or {run}",
		`client.agent({tools: {f: {}}})`:                             "tools.f needs run (a function) or result",
		`client.agent({tools: {f: {run: () => 1, result: 'x'}}})`:    "takes run or result, not both",
		`client.agent({tools: {f: {run: () => 1, latency: '1s'}}})`:  "latency is for a canned result",
		`client.agent({tools: {f: {result: 'x', latency: 'soon'}}})`: "tools.f.latency must be a duration",
		`client.agent({tools: {f: {result: 'x', wait: 1}}})`:         `unknown option "wait"`,
		`client.agent({tools: {f: {run: 'x'}}})`:                     "tools.f.run must be a function",
		`client.agent({tools: {f: {result: 'x', parameters: 'x'}}})`: "tools.f.parameters must be a JSON schema object",
		`client.agent({tools: {f: () => 1}, maxSteps: 0})`:           "maxSteps must be a whole number of 1 or more",
		`client.agent({tools: {f: () => 1}, maxSteps: 1.5})`:         "maxSteps must be a whole number",
		`client.agent({tools: {f: () => 1}, badCalls: 'ignore'})`:    "badCalls must be 'report' or 'fail'",
		`client.agent({tools: {f: () => 1}, think: '1s'})`:           "think: an agent's steps follow each other",
		`client.agent({tools: {f: () => 1}, body: {tools: []}})`:     "body.tools is declared from tools",
		`client.agent({tools: {f: () => 1}, systemPrompt: 'x'})`:     "systemPrompt",
		`tgi.agent({tools: {f: () => 1}})`:                           "protocol tgi has no tool calls",
	} {
		_, err := vu.rt.VU.Runtime().RunString(code)
		require.ErrorContains(t, err, want, code)
	}
}
