package module

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// A body sent again is planned once, yet every request carries the body
// the script gave at that call: the same body twice, then the same object
// changed between calls (a message pushed, a number, a nested value, the
// model), a JSON string, a body that is not plain JSON values, and one
// that turns stream off after being sent, and one with a cycle.
func TestEachRequestCarriesItsCallsBody(t *testing.T) {
	t.Parallel()
	srv := recordBodies(t, func(w http.ResponseWriter, r *http.Request, _ map[string]any) { answer(w, r) })
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, model: 'm'});`, srv.URL))
	t.Cleanup(vu.closeIdle)
	vu.run(`(async () => {
		const body = {messages: [{role: 'user', content: 'one'}], max_tokens: 4};
		await client.chat({messages: [{role: 'user', content: 'one'}], max_tokens: 4});
		await client.chat(body);
		body.messages.push({role: 'user', content: 'two'});
		await client.chat(body);
		body.max_tokens = 4.5;
		await client.chat(body);
		body.stream_options = {include_usage: true, continuous_usage_stats: true};
		await client.chat(body);
		body.model = 'other';
		globalThis.model = (await client.chat(body)).model;
		await client.chat('{"messages":[],"max_tokens":1}');
		await client.chat('{"messages":[],"max_tokens":2}');
		await client.chat({messages: [], when: new Date(0)});
		await client.chat({messages: [], when: new Date(1000)});
		try { body.stream = false; await client.chat(body); } catch (e) { globalThis.streamOff = String(e); }
		const cyclic = {messages: []};
		cyclic.self = cyclic;
		for (const _ of [1, 2]) {
			try { await client.chat(cyclic); } catch (e) { globalThis.cycle = String(e); }
		}
	})()`)
	got := srv.all()
	require.Len(t, got, 10)
	msgs := func(i int) int { return len(got[i]["messages"].([]any)) } //nolint:forcetypeassert
	for i, want := range []int{1, 1, 2, 2, 2, 2} {
		require.Equal(t, want, msgs(i), "request %d's messages", i)
		require.Equal(t, true, got[i]["stream"], "request %d is streamed", i)
	}
	require.Equal(t, []any{4.0, 4.0, 4.0, 4.5, 4.5, 4.5}, []any{got[0]["max_tokens"], got[1]["max_tokens"],
		got[2]["max_tokens"], got[3]["max_tokens"], got[4]["max_tokens"], got[5]["max_tokens"]})
	require.Equal(t, map[string]any{"include_usage": true}, got[3]["stream_options"])
	require.Equal(t, map[string]any{"include_usage": true, "continuous_usage_stats": true}, got[4]["stream_options"])
	require.Equal(t, []any{"m", "m", "m", "m", "m", "other"}, []any{got[0]["model"], got[1]["model"],
		got[2]["model"], got[3]["model"], got[4]["model"], got[5]["model"]})
	require.Equal(t, 1.0, got[6]["max_tokens"])
	require.Equal(t, 2.0, got[7]["max_tokens"])
	require.NotEqual(t, got[8]["when"], got[9]["when"], "a Date is exported afresh")
	require.Contains(t, vu.rt.VU.Runtime().Get("streamOff").String(), "body.stream is false")
	require.Contains(t, vu.rt.VU.Runtime().Get("cycle").String(), "chat body", "a cycle is no JSON, each time")
}

// An embed body sent again is read once, yet every request carries its
// call's input and options: the same body twice, then its input and
// dimensions changed, and a rerank's documents.
func TestEachRetrievalRequestCarriesItsCallsBody(t *testing.T) {
	t.Parallel()
	srv := recordBodies(t, func(w http.ResponseWriter, _ *http.Request, m map[string]any) {
		w.Header().Set("Content-Type", "application/json")
		if docs, ok := m["documents"].([]any); ok {
			_, _ = fmt.Fprintf(w, `{"results":[{"index":0,"relevance_score":0.5}],"meta":{"n":%d}}`, len(docs))
			return
		}
		_, _ = w.Write(embeddingsBody(1, 4, "float"))
	})
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, model: 'm'});`, srv.URL+"/v1"))
	t.Cleanup(vu.closeIdle)
	vu.run(`(async () => {
		const body = {input: 'one'};
		globalThis.oks = [];
		for (const _ of [1, 2]) oks.push((await client.embed(body)).ok);
		body.input = 'two';
		oks.push((await client.embed(body)).ok);
		body.dimensions = 4;
		oks.push((await client.embed(body)).ok);
		const rr = {query: 'q', documents: ['a']};
		await client.rerank(rr);
		rr.documents.push('b');
		await client.rerank(rr);
	})()`)
	require.Equal(t, []any{true, true, true, true}, vu.rt.VU.Runtime().Get("oks").Export())
	got := srv.all()
	require.Len(t, got, 6)
	require.Equal(t, []any{"one", "one", "two", "two"}, []any{got[0]["input"], got[1]["input"], got[2]["input"], got[3]["input"]})
	require.NotContains(t, got[2], "dimensions")
	require.Equal(t, 4.0, got[3]["dimensions"])
	require.Equal(t, []any{"a"}, got[4]["documents"])
	require.Equal(t, []any{"a", "b"}, got[5]["documents"])
}
