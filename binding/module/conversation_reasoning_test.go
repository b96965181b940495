package module

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// signedServer answers every request with a recorded stream (a protocol
// fixture, in the provider's documented format) and keeps the request bodies.
func signedServer(t *testing.T, fixture string) (string, func() []map[string]any) {
	t.Helper()
	answer, err := os.ReadFile(fixture)
	require.NoError(t, err)
	var mu sync.Mutex
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var b map[string]any
		_ = json.Unmarshal(raw, &b)
		mu.Lock()
		bodies = append(bodies, b)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(answer)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []map[string]any {
		mu.Lock()
		defer mu.Unlock()
		return append([]map[string]any(nil), bodies...)
	}
}

// With reasoning 'send', turn 2 carries turn 1's signed reasoning exactly as
// it streamed: Anthropic's thinking block with its signature and the
// redacted block's data before the text; Gemini's thought part with its
// thoughtSignature; Responses' reasoning item whole. With 'drop', none of it.
func TestConversationSendsSignedReasoningBack(t *testing.T) {
	for _, c := range []struct {
		proto, fixture, send, drop string
	}{
		{"anthropic", "../../testdata/protocols/anthropic/thinking.txt",
			`[{"content":"one","role":"user"},{"content":[{"signature":"EqQBCgIYAh...","thinking":"Let me work this out.","type":"thinking"},` +
				`{"data":"EmwKAhgBEgy3va3pzix/LafPsn4a","type":"redacted_thinking"},{"text":"It is 7.","type":"text"}],"role":"assistant"},` +
				`{"content":"two","role":"user"}]`,
			`[{"content":"one","role":"user"},{"content":[{"text":"It is 7.","type":"text"}],"role":"assistant"},{"content":"two","role":"user"}]`},
		{"gemini", "../../testdata/protocols/gemini/thoughts.txt",
			`[{"parts":[{"text":"one"}],"role":"user"},{"parts":[{"text":"Considering the options.","thought":true,"thoughtSignature":"c2ln"},` +
				`{"text":"Answer done."}],"role":"model"},{"parts":[{"text":"two"}],"role":"user"}]`,
			`[{"parts":[{"text":"one"}],"role":"user"},{"parts":[{"text":"Answer done."}],"role":"model"},{"parts":[{"text":"two"}],"role":"user"}]`},
		{"openai-responses", "../../testdata/protocols/openai-responses/reasoning.txt",
			`[{"content":"one","role":"user"},{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"Thinking about it."}]},` +
				`{"content":"42","role":"assistant"},{"content":"two","role":"user"}]`,
			`[{"content":"one","role":"user"},{"content":"42","role":"assistant"},{"content":"two","role":"user"}]`},
	} {
		t.Run(c.proto, func(t *testing.T) {
			for policy, want := range map[string]string{"send": c.send, "drop": c.drop} {
				base, bodies := signedServer(t, c.fixture)
				vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, model: 'm', protocol: %q});`, base, c.proto))
				vu.run(fmt.Sprintf(`(async () => {
					const conv = client.conversation({reasoning: %q, body: {max_tokens: 50}});
					await conv.say('one');
					await conv.say('two');
					conv.end();
				})()`, policy))
				got := bodies()
				require.Len(t, got, 2)
				field := map[string]string{"anthropic": "messages", "gemini": "contents", "openai-responses": "input"}[c.proto]
				hist, err := json.Marshal(got[1][field])
				require.NoError(t, err)
				require.JSONEq(t, want, string(hist), policy)
				vu.closeIdle()
			}
		})
	}
}

// history.chain: each Responses turn after the first sends only its new
// input and the previous answer's id (read from its stream); llm-sim
// answers it on the whole conversation it kept, so the prompt still grows.
// An agent's tool results go the same way.
func TestConversationResponsesChain(t *testing.T) {
	base, trace := startSimBodies(t, nil)
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, model: 'sim', protocol: 'openai-responses'});`, base))
	vu.run(`(async () => {
		const conv = client.conversation({system: 'be brief', body: {max_output_tokens: 6}, history: {chain: true}});
		globalThis.prompts = [];
		for (const q of ['one', 'two', 'three']) {
			const r = await conv.say(q);
			if (!r.ok) throw new Error(r.error.message);
			prompts.push(r.usage.promptTokens);
		}
		conv.end();
	})()`)
	reqs := tracedRequests(t, trace, 3)
	var ids []string
	for _, l := range trace.lines() {
		var rec struct {
			RequestID string `json:"request_id"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &rec))
		ids = append(ids, "resp_"+rec.RequestID)
	}
	require.NotContains(t, reqs[0].Body, "previous_response_id")
	require.Equal(t, []any{map[string]any{"role": "user", "content": "one"}}, reqs[0].Body["input"])
	for i, q := range []string{"two", "three"} {
		b := reqs[i+1].Body
		require.Equal(t, ids[i], b["previous_response_id"], "turn %d names turn %d's answer", i+2, i+1)
		require.Equal(t, []any{map[string]any{"role": "user", "content": q}}, b["input"], "turn %d sends only its input", i+2)
		require.Equal(t, "be brief", b["instructions"])
	}
	prompts := vu.rt.VU.Runtime().Get("prompts").Export().([]any)
	require.Less(t, prompts[0].(int64), prompts[1].(int64))
	require.Less(t, prompts[1].(int64), prompts[2].(int64))
	vu.closeIdle()
}

// An agent on a chained history: each step after the first sends only the
// tool results with the previous answer's id, and llm-sim, which counts a
// job's tool rounds from the whole conversation it kept, ends the job after
// the rounds asked for (without the chain's history it would ask again).
func TestAgentResponsesChain(t *testing.T) {
	base, trace := startSimBodies(t, nil)
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, model: 'sim', protocol: 'openai-responses'});`, base))
	vu.run(`(async () => {
		const a = client.agent({history: {chain: true}, body: {max_output_tokens: 40},
			params: {headers: {'X-Sim-Tool-Calls': '2,1'}},
			tools: {weather: {result: 'sunny'}, clock: {result: 'noon'}}});
		globalThis.job = await a.run('weather and time?');
	})()`)
	job := vu.rt.VU.Runtime().Get("job").ToObject(vu.rt.VU.Runtime())
	require.True(t, job.Get("ok").ToBoolean(), job.Get("error").String())
	require.Equal(t, int64(3), job.Get("steps").ToInteger())
	reqs := tracedRequests(t, trace, 3)
	for i, r := range reqs[1:] {
		require.Contains(t, r.Body, "previous_response_id", "step %d", i+2)
		for _, it := range r.Body["input"].([]any) {
			require.Equal(t, "function_call_output", it.(map[string]any)["type"], "step %d sends only the tool results", i+2)
		}
	}
	vu.closeIdle()
}
