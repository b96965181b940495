package module

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/sim"
)

// A chained Responses conversation on a client with a fallback: the
// fallback never issued the previous answer's id, so its request carries the
// whole history; the turn after the fallback's answer sends the whole
// history to the primary (which never issued that id either), and the
// chain resumes from the primary's next answer.
func TestChainedHistoryOnAFallback(t *testing.T) {
	primaryBase, primaryTrace := startSimBodies(t, nil)
	fallbackBase, fallbackTrace := startSimBodies(t, nil)
	// The primary fails its second request, as a server in trouble would.
	target, err := url.Parse(strings.TrimSuffix(primaryBase, "/v1"))
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var n atomic.Int32
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 2 {
			http.Error(w, `{"error":{"message":"overloaded","type":"server_error"}}`, http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)

	vu := newTestVU(t, fmt.Sprintf(`
		const backup = new llm.Client({baseURL: %q, model: 'sim', protocol: 'openai-responses'});
		const client = new llm.Client({baseURL: %q, model: 'sim', protocol: 'openai-responses', fallback: backup});`, fallbackBase, front.URL+"/v1"))
	vu.run(`(async () => {
		const conv = client.conversation({body: {max_output_tokens: 4}, history: {chain: true}});
		globalThis.routes = [];
		for (const q of ['one', 'two', 'three', 'four']) {
			const r = await conv.say(q);
			routes.push(r && r.ok ? r.route : 'failed: ' + JSON.stringify(r && r.error));
		}
		conv.end();
	})()`)
	require.Equal(t, []any{"primary", "fallback", "primary", "primary"}, vu.rt.VU.Runtime().Get("routes").Export())

	prim := tracedRequests(t, primaryTrace, 3) // turns 1, 3 and 4 (turn 2's request never reached it)
	fb := tracedRequests(t, fallbackTrace, 1)
	inputs := func(r tracedRequest) int { return len(r.Body["input"].([]any)) }
	require.Nil(t, fb[0].Body["previous_response_id"], "the fallback never issued the primary's id")
	require.Equal(t, 3, inputs(fb[0]), "turn 2 whole: one, its answer, two")
	require.Equal(t, 200, fb[0].Status)
	require.Nil(t, prim[1].Body["previous_response_id"], "the fallback's answer id is not the primary's")
	require.Equal(t, 5, inputs(prim[1]), "turn 3 whole")
	require.NotNil(t, prim[2].Body["previous_response_id"], "the chain resumes from the primary's own answer")
	require.Equal(t, 1, inputs(prim[2]), "turn 4: only its question")
	for _, r := range prim {
		require.Equal(t, 200, r.Status)
	}
	vu.closeIdle()
}

// With X-Sim-Reasoning, conv.history() shows each answer's reasoning and its
// signed pieces as they streamed: Anthropic's thinking block with its
// signature and the redacted block's data, as llm-sim's trace has them.
func TestHistoryShowsSignedReasoning(t *testing.T) {
	base, trace := startSimBodies(t, nil)
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, model: 'sim', protocol: 'anthropic'});`, base))
	vu.run(`(async () => {
		const conv = client.conversation({body: {max_tokens: 12}, reasoning: 'send',
			params: {headers: {'` + sim.ReasoningHeader + `': '4,redacted'}}});
		await conv.say('one');
		globalThis.hist = conv.history();
		conv.end();
	})()`)
	var rec struct {
		Reasoning  string   `json:"reasoning"`
		Signatures []string `json:"signatures"`
	}
	lines := trace.lines()
	require.Len(t, lines, 1)
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &rec))
	hist := vu.rt.VU.Runtime().Get("hist").Export().([]any)
	require.Len(t, hist, 2)
	answer := hist[1].(map[string]any)
	require.Equal(t, rec.Reasoning, answer["reasoning"])
	thoughts := answer["thoughts"].([]any)
	require.Len(t, thoughts, 2)
	first, second := thoughts[0].(map[string]any), thoughts[1].(map[string]any)
	require.Equal(t, "thinking", first["kind"])
	require.Equal(t, rec.Reasoning, first["text"])
	require.Equal(t, rec.Signatures[0], first["signature"])
	require.Equal(t, "redacted_thinking", second["kind"])
	require.Equal(t, rec.Signatures[1], second["signature"])
	vu.closeIdle()
}
