package module

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grafana/sobek"
	"github.com/stretchr/testify/require"
)

// Two clients, a conversation on each at once in one VU: each keeps its own
// history and session key, and sends its key as configured (a body field,
// a cookie).
func TestTwoConversationsOnTwoClients(t *testing.T) {
	base, trace := startSimBodies(t, nil)
	vu := newTestVU(t, fmt.Sprintf(`const a = new llm.Client({baseURL: %q, model: 'sim', name: 'a'});
		const b = new llm.Client({baseURL: %q, model: 'sim', name: 'b'});`, base, base))
	vu.run(`(async () => {
		const ca = a.conversation({body: {max_tokens: 4}, session: {body: 'user'}});
		const cb = b.conversation({body: {max_tokens: 4}, session: {cookie: 'sid', key: 'fixed-key'}});
		globalThis.keys = [ca.session, cb.session];
		await Promise.all([ca, cb].map(async (c, i) => {
			for (const q of ['first ' + i, 'second ' + i]) await c.say(q);
		}));
		globalThis.hist = [ca.history().length, cb.history().length];
		ca.end(); cb.end();
	})()`)
	rt := vu.rt.VU.Runtime()
	keys := rt.Get("keys").Export().([]any)
	require.NotEqual(t, keys[0], keys[1])
	require.Equal(t, "fixed-key", keys[1])
	require.Equal(t, []any{int64(4), int64(4)}, rt.Get("hist").Export(), "two turns and two answers each")
	reqs := tracedRequests(t, trace, 4)
	byUser, byCookie := 0, 0
	for _, r := range reqs {
		msgs := r.Body["messages"].([]any)
		first := msgs[0].(map[string]any)["content"].(string)
		switch {
		case r.Body["user"] == keys[0]:
			byUser++
			require.Equal(t, "first 0", first, "a's history only")
			require.Empty(t, r.Headers["Cookie"])
		case r.Headers["Cookie"] == "sid=fixed-key":
			byCookie++
			require.Equal(t, "first 1", first, "b's history only")
			require.Nil(t, r.Body["user"])
		default:
			t.Fatalf("a request with neither session: %v %v", r.Body, r.Headers)
		}
	}
	require.Equal(t, 2, byUser)
	require.Equal(t, 2, byCookie)
	require.Len(t, vu.drain()["llm_jobs"], 2)
	vu.closeIdle()
}

// Under a Schedule the first turn is the credit's send; a pause before a
// later turn is never dispatch delay, even when the script claims a credit
// before each turn: the credit is due the pause later.
func TestConversationUnderSchedule(t *testing.T) {
	base, _ := startSimBodies(t, nil)
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, model: 'sim'});
		const sched = llm.Schedule.constant({rate: 2, duration: '1m'}); // credits 500 ms apart: each claimed on time`, base))
	vu.run(`(async () => {
		const conv = client.conversation({body: {max_tokens: 4}, think: '300ms'});
		globalThis.rs = [];
		for (const q of ['a', 'b', 'c']) {
			if (q !== 'b') sched.next(); // turn b has no credit of its own
			const r = await conv.say(q);
			rs.push({dueAt: r.dueAt, delay: r.dispatchDelay, ok: r.ok});
		}
		conv.end();
	})()`)
	rs := plain(vu.rt.VU.Runtime().Get("rs").Export()).([]any)
	first, second, third := rs[0].(map[string]any), rs[1].(map[string]any), rs[2].(map[string]any)
	require.NotNil(t, first["dueAt"], "turn 1 is the credit's send")
	require.Less(t, first["delay"].(float64), 100.0)
	require.Nil(t, second["dueAt"], "no credit claimed: no due time, not a stale one")
	require.NotNil(t, third["dueAt"])
	require.Less(t, third["delay"].(float64), 150.0, "the 300 ms pause is not dispatch delay")
	vu.closeIdle()
}

// A router token: the header a router set on the first answer goes back on
// every later turn; a conversation started after it gets its own.
func TestConversationRouterToken(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("X-Route"))
		n++
		if r.Header.Get("X-Route") == "" {
			w.Header().Set("X-Route", fmt.Sprintf("replica-%d", n))
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, model: 'm'});`, srv.URL))
	vu.run(`(async () => {
		for (let c = 0; c < 2; c++) {
			const conv = client.conversation({session: {routerHeader: 'X-Route'}});
			for (const q of ['1', '2', '3']) await conv.say(q);
			conv.end();
		}
	})()`)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"", "replica-1", "replica-1", "", "replica-4", "replica-4"}, seen)
	vu.closeIdle()
}

// User-centric timing: one user of 2 at 10 turns/s sends a turn every
// 200 ms; an answer later than that sends the next turn at once, and the one
// after it 200 ms after that send: no catch-up burst.
func TestConversationPace(t *testing.T) {
	base, _ := startSimBodies(t, nil)
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, model: 'sim'});`, base))
	vu.run(`(async () => {
		const conv = client.conversation({body: {max_tokens: 2}, pace: {users: 2, rate: 10}});
		globalThis.sends = [];
		globalThis.ends = [];
		for (let i = 0; i < 4; i++) {
			const slow = i === 1 ? {headers: {'X-Sim-Fault': 'ttft=450'}} : {};
			const r = await conv.say('turn ' + i, slow);
			sends.push(r.dueAt); ends.push(Date.now());
		}
		globalThis.job = conv.end();
	})()`)
	rt := vu.rt.VU.Runtime()
	due := func(i int) float64 { return rt.Get("sends").Export().([]any)[i].(float64) }
	end := func(i int) float64 { return float64(rt.Get("ends").Export().([]any)[i].(int64)) }
	// Due times are the pace's own arithmetic (a send + 200 ms), so these
	// bounds hold on a loaded machine; only the late answer's hand-over is a
	// measured wait.
	require.GreaterOrEqual(t, due(1)-due(0), 199.9, "a turn every users/rate = 200 ms")
	require.Less(t, due(1)-due(0), 260.0)
	require.Greater(t, end(1)-due(1), 400.0, "turn 2's answer came after its interval")
	require.Less(t, due(2)-end(1), 50.0, "the next turn at once after a late answer")
	require.GreaterOrEqual(t, due(3)-due(2), 199.9, "and the interval counts from that send: no burst")
	require.Less(t, due(3)-due(2), 260.0)
	job := rt.Get("job").Export().(map[string]any)
	require.Greater(t, job["thinkTime"].(float64), 150.0, "the pauses the pace left are the user's")
	vu.closeIdle()
}

// A test that stops while a user thinks: say() resolves null at once, no
// request goes out, the cut job is not recorded, nothing leaks.
func TestConversationStoppedWhileThinking(t *testing.T) {
	noLeaks(t)
	base, trace := startSimBodies(t, nil)
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, model: 'sim'});`, base))
	go func() {
		time.Sleep(400 * time.Millisecond)
		vu.rt.CancelContext()
	}()
	start := time.Now()
	vu.run(`(async () => {
		const conv = client.conversation({body: {max_tokens: 2}, think: '1m'});
		await conv.say('one');
		globalThis.second = await conv.say('two');
		globalThis.job = conv.end();
	})()`)
	require.Less(t, time.Since(start), 10*time.Second, "the pause ended with the test")
	rt := vu.rt.VU.Runtime()
	require.True(t, sobek.IsNull(rt.Get("second")), "say() resolves null once the test is stopping")
	require.Len(t, tracedRequests(t, trace, 1), 1, "no request after the stop")
	require.Empty(t, vu.drain()["llm_jobs"], "a job the stop cut short is not a data point")
	vu.closeIdle()
}

// Turns from a dataset: say(item) sends the item's last user message (not
// its canned history), asks for its maxTokens where the protocol reads it
// unless the body does, and tags the turn with the item's category.
func TestConversationFromDatasetItems(t *testing.T) {
	base, trace := startSimBodies(t, nil)
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, model: 'sim'});
		const set = llm.Dataset.synthetic({seed: 2, mix: {short: 1}, turns: {min: 2, max: 2},
			categories: {short: {maxTokens: 5}}});`, base))
	vu.run(`(async () => {
		const conv = client.conversation();
		const first = set.at(0), second = set.at(1);
		globalThis.items = [first, second];
		await conv.say(first);
		await conv.say(second, {body: {max_tokens: 3}});
		globalThis.job = conv.end();
	})()`)
	rt := vu.rt.VU.Runtime()
	items := rt.Get("items").Export().([]any)
	lastUser := func(it any) string {
		msgs := it.(map[string]any)["messages"].([]any)
		return msgs[len(msgs)-1].(map[string]any)["content"].(string)
	}
	reqs := tracedRequests(t, trace, 2)
	m0 := reqs[0].Body["messages"].([]any)
	require.Len(t, m0, 1)
	require.Equal(t, lastUser(items[0]), m0[0].(map[string]any)["content"])
	require.InDelta(t, 5, reqs[0].Body["max_tokens"], 0, "the item's maxTokens")
	m1 := reqs[1].Body["messages"].([]any)
	require.Len(t, m1, 3, "the live history, not the item's canned one")
	require.Equal(t, lastUser(items[1]), m1[2].(map[string]any)["content"])
	require.InDelta(t, 3, reqs[1].Body["max_tokens"], 0, "the turn's body wins over the item")
	got := vu.drain()
	cat, _ := got["llm_ttft"][0].Tags.Get("category")
	require.Equal(t, "short", cat)
	jobCat, _ := got["llm_jobs"][0].Tags.Get("category")
	require.Equal(t, "short", jobCat, "the job's category is its first turn's")
	vu.closeIdle()
}

// An item's maxTokens goes where each protocol reads it, nested fields of
// the script's body kept.
func TestConversationItemMaxTokensPerProtocol(t *testing.T) {
	base, trace := startSimBodies(t, nil)
	root := strings.TrimSuffix(base, "/v1")
	vu := newTestVU(t, fmt.Sprintf(`const g = new llm.Client({baseURL: %q, protocol: 'gemini', model: 'sim'});
		const o = new llm.Client({baseURL: %q, protocol: 'ollama', model: 'sim'});
		const item = {id: 'x', messages: [{role: 'user', content: 'hi'}], maxTokens: 4};`, root+"/v1beta", root))
	vu.run(`(async () => {
		await g.conversation({body: {generationConfig: {temperature: 0.5}}}).say(item);
		await o.conversation().say(item);
	})()`)
	reqs := tracedRequests(t, trace, 2)
	var gen, opts map[string]any
	for _, r := range reqs {
		if c, ok := r.Body["generationConfig"].(map[string]any); ok {
			gen = c
		}
		if c, ok := r.Body["options"].(map[string]any); ok {
			opts = c
		}
	}
	require.Equal(t, map[string]any{"temperature": 0.5, "maxOutputTokens": 4.0}, gen)
	require.Equal(t, map[string]any{"num_predict": 4.0}, opts)
	vu.closeIdle()
}
