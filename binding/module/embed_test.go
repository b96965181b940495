package module

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// call runs one embed or rerank call on the VU and returns its result.
func (v *testVU) call(method, args string) map[string]any {
	v.t.Helper()
	v.run(`globalThis.res = undefined; client.` + method + `(` + args + `).then(r => { globalThis.res = r })`)
	res, ok := plain(v.rt.VU.Runtime().Get("res").Export()).(map[string]any)
	require.True(v.t, ok, "%s gave no result", method)
	return res
}

// TestEmbedAgainstTheSimulator: a batched embeddings call through the JS
// API, its figures in the result and in k6's samples, and no chat-only
// figure made up for it.
func TestEmbedAgainstTheSimulator(t *testing.T) {
	base, _ := startSim(t, "fast")
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, model: 'sim'});`, base))
	res := vu.call("embed", `{input: ['red apples', 'green pears', 'blue plums'], encodingFormat: 'base64', dimensions: 64}`)
	require.Equal(t, true, res["ok"], "%v", res["error"])
	require.Equal(t, "embed", res["op"])
	require.Equal(t, "openai", res["api"])
	require.EqualValues(t, 3, res["count"])
	require.EqualValues(t, 64, res["dimension"])
	require.EqualValues(t, 3, res["batchSize"])
	require.Equal(t, "usage", res["tokenSource"])
	require.Greater(t, res["inputTokens"], int64(0))
	require.Greater(t, res["duration"], 0.0)
	require.GreaterOrEqual(t, res["duration"], res["ttfb"])
	require.Nil(t, res["vectors"], "vectors are counted, not kept, unless asked")
	require.Nil(t, res["results"])
	require.NotContains(t, res, "ttft")

	got := vu.drain()
	require.Len(t, got["llm_requests"], 1)
	require.Len(t, got["llm_embed_duration"], 1)
	require.Len(t, got["llm_batch_size"], 1)
	require.InDelta(t, 3, got["llm_batch_size"][0].Value, 0)
	require.Len(t, got["llm_input_tokens_per_sec"], 1)
	require.Len(t, got["llm_request_bytes"], 1)
	require.Empty(t, got["llm_ttft"], "a non-streamed call has no TTFT")
	require.Empty(t, got["llm_e2e"])
	require.Empty(t, got["llm_inter_token_gap"])
	op, _ := got["llm_embed_duration"][0].Tags.Get("op")
	require.Equal(t, "embed", op)

	kept := vu.call("embed", `{input: 'one', keepVectors: true, dimensions: 8}`)
	require.Equal(t, true, kept["ok"], "%v", kept["error"])
	vecs, ok := kept["vectors"].([]any)
	require.True(t, ok)
	require.Len(t, vecs, 1)
	vu.closeIdle()
}

// TestRerankAgainstTheSimulator: both rerank wire formats, best first, topN.
func TestRerankAgainstTheSimulator(t *testing.T) {
	base, _ := startSim(t, "fast")
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, model: 'sim'});`, base))
	for _, api := range []string{"cohere", "tei"} {
		res := vu.call("rerank", fmt.Sprintf(`{api: %q, query: 'quarterly report',
			documents: ['the quarterly report', 'a green garden', 'report of the quarter', 'pears'], topN: 2}`, api))
		require.Equal(t, true, res["ok"], "%s: %v", api, res["error"])
		require.Equal(t, "rerank", res["op"])
		require.EqualValues(t, 4, res["batchSize"])
		results, ok := res["results"].([]any)
		require.True(t, ok)
		require.Len(t, results, 2, api)
		first, second := results[0].(map[string]any), results[1].(map[string]any)
		require.GreaterOrEqual(t, first["score"], second["score"], "best first")
		require.Nil(t, res["dimension"])
	}
	got := vu.drain()
	require.Len(t, got["llm_embed_duration"], 2)
	vu.closeIdle()
}

// TestRetrievalRetriesAndErrorClasses: a 503 is retried under the client's
// policy, a slow answer meets the first-token timeout (the wait for the
// headers), and bad bodies are errors naming the option.
func TestRetrievalRetriesAndErrorClasses(t *testing.T) {
	noLeaks(t)
	base, _ := startSim(t, "fast")
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, model: 'sim',
		retry: {attempts: 2, on: ['http_5xx'], backoff: {base: '10ms'}}});`, base))
	res := vu.call("embed", `{input: ['a']}, {headers: {'X-Sim-Fault': 'status=503'}}`)
	require.Equal(t, false, res["ok"])
	require.Equal(t, "http_5xx", res["error"].(map[string]any)["type"])
	require.EqualValues(t, 1, res["retries"])
	require.Len(t, res["attempts"], 2)

	res = vu.call("rerank", `{query: 'q', documents: ['a']}, {headers: {'X-Sim-Fault': 'headers_delay=2000'}, timeouts: {firstToken: '200ms'}}`)
	require.Equal(t, false, res["ok"])
	require.Equal(t, "timeout_first_token", res["error"].(map[string]any)["type"])
	got := vu.drain()
	require.Len(t, got["llm_requests"], 2)
	require.Len(t, got["llm_errors"], 2)
	require.Len(t, got["llm_attempts"], 3)

	for code, want := range map[string]string{
		`client.embed({input: 3})`:                          "input must be a string or an array of strings",
		`client.embed({input: ['a'], encodingFormat: 'x'})`: "encodingFormat",
		`client.embed({inptu: ['a']})`:                      "inptu",
		`client.rerank({query: 'q', documents: []})`:        "documents",
		`client.embed({input: 'a'}, {onEvent: () => 1})`:    "onEvent is for streamed calls",
		`client.embed({input: 'a', api: 'nope'})`:           "unknown embeddings API",
	} {
		_, err := vu.rt.RunOnEventLoop(code)
		require.ErrorContains(t, err, want, code)
	}
	vu.closeIdle()
}

// TestRetrievalTakesTheScheduleDueTime: the first call after
// Schedule.next() is the credit's send, whether it is an embed, a rerank or
// a chat call. An embed that takes it carries the dispatch delay and its
// duration counted from the due time, and no TTFT from it (it has no first
// token); the call after it has no due time, so its lateness is not a stale
// credit's.
func TestRetrievalTakesTheScheduleDueTime(t *testing.T) {
	base, _ := startSim(t, "fast")
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, model: 'sim'});
		const sched = llm.Schedule.constant({rate: 50, duration: '1m'});`, base))
	vu.run(`sched.next()`)            // the first credit, due at the schedule's start
	time.Sleep(30 * time.Millisecond) // sent late on purpose
	emb := vu.call("embed", `{input: ['a', 'b']}`)
	require.Equal(t, true, emb["ok"], "%v", emb["error"])
	require.NotNil(t, emb["dueAt"], "the embed took the credit's due time")
	delay, ok := emb["dispatchDelay"].(float64)
	require.True(t, ok, "dispatchDelay: %v", emb["dispatchDelay"])
	require.GreaterOrEqual(t, delay, 25.0, "sent 30 ms after its due time")
	fromDue, ok := emb["e2eFromDue"].(float64)
	require.True(t, ok, "e2eFromDue: %v", emb["e2eFromDue"])
	require.InDelta(t, delay+emb["duration"].(float64), fromDue, 0.01, "the whole answer counted from the due time")
	require.NotContains(t, emb, "ttftFromDue", "a non-streamed call has no first token to count from the due time")

	after := vu.chat(`{messages: [{role: 'user', content: 'hi'}], max_tokens: 2}`)
	require.Equal(t, true, after["ok"], "%v", after["error"])
	require.Nil(t, after["dueAt"], "the credit went with the embed: the chat after it has no due time")
	require.Nil(t, after["dispatchDelay"])
	rr := vu.call("rerank", `{query: 'q', documents: ['a']}`)
	require.Nil(t, rr["dueAt"])
	require.Nil(t, rr["dispatchDelay"], "unknown, never 0")
	require.Nil(t, rr["e2eFromDue"])

	got := vu.drain()
	require.Len(t, got["llm_dispatch_delay"], 1)
	op, _ := got["llm_dispatch_delay"][0].Tags.Get("op")
	require.Equal(t, "embed", op, "the one due call was the embed")
	require.Len(t, got["llm_e2e_from_due"], 1)
	require.Empty(t, got["llm_ttft_from_due"])
	vu.closeIdle()
}
