package module

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/sim"
)

// startSimBodies is startSim with the request bodies and headers in the
// trace, and the model's knobs changed by set.
func startSimBodies(t *testing.T, set func(*sim.ModelConfig)) (string, *syncBuffer) {
	t.Helper()
	cfg := sim.DefaultConfig()
	m, err := sim.NewModel("sim", "fast")
	require.NoError(t, err)
	if set != nil {
		set(&m)
	}
	cfg.Models, cfg.TraceBodies = []sim.ModelConfig{m}, true
	trace := &syncBuffer{}
	cfg.TraceWriter = trace
	s, err := sim.New(cfg)
	require.NoError(t, err)
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		srv.Close()
		_ = s.Close()
	})
	return srv.URL + "/v1", trace
}

// tracedRequest is what the simulator got, as its trace has it.
type tracedRequest struct {
	Body    map[string]any    `json:"body"`
	Headers map[string]string `json:"headers"`
	Status  int               `json:"status"`
}

func tracedRequests(t *testing.T, trace *syncBuffer, n int) []tracedRequest {
	t.Helper()
	require.Eventually(t, func() bool { return len(trace.lines()) == n }, 5*time.Second, 5*time.Millisecond)
	out := make([]tracedRequest, n)
	for i, l := range trace.lines() {
		require.NoError(t, json.Unmarshal([]byte(l), &out[i]))
	}
	return out
}

// Each turn carries every earlier answer exactly as it streamed, the
// session header on every turn; think time is in the job and not in any
// call; the job's figures reach k6 tagged with its kind.
func TestConversationHistoryAsStreamed(t *testing.T) {
	base, trace := startSimBodies(t, nil)
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, model: 'sim'});`, base))
	vu.run(`(async () => {
		const conv = client.conversation({system: 'be brief', body: {max_tokens: 6}, think: '150ms',
			session: {header: 'X-Session-Affinity'}});
		globalThis.key = conv.session;
		globalThis.texts = [];
		globalThis.turns = [];
		for (const q of ['one', 'two', 'three']) {
			const r = await conv.say(q);
			texts.push(r.text); turns.push(r.turn);
			globalThis.maxTTFT = Math.max(globalThis.maxTTFT || 0, r.e2e);
		}
		globalThis.job = conv.end();
	})()`)
	rt := vu.rt.VU.Runtime()
	texts := rt.Get("texts").Export().([]any)
	require.Equal(t, []any{int64(1), int64(2), int64(3)}, rt.Get("turns").Export())
	key := rt.Get("key").String()
	require.Len(t, key, 32)

	reqs := tracedRequests(t, trace, 3)
	for i, r := range reqs {
		require.Equal(t, key, r.Headers["X-Session-Affinity"], "turn %d", i+1)
		msgs := r.Body["messages"].([]any)
		require.Len(t, msgs, 2+2*i, "system, the earlier turns and the question")
		require.Equal(t, map[string]any{"role": "system", "content": "be brief"}, msgs[0])
		for j := 0; j < i; j++ {
			require.Equal(t, map[string]any{"role": "assistant", "content": texts[j]}, msgs[2+2*j], "turn %d carries answer %d", i+1, j+1)
		}
	}

	job := rt.Get("job").Export().(map[string]any)
	require.Equal(t, "conversation", job["kind"])
	require.Equal(t, true, job["ok"])
	require.EqualValues(t, 3, job["turns"])
	require.EqualValues(t, 3, job["steps"])
	think, dur, model := job["thinkTime"].(float64), job["duration"].(float64), job["modelTime"].(float64)
	require.GreaterOrEqual(t, think, 300.0, "two pauses of 150 ms")
	require.GreaterOrEqual(t, dur, think+model-1)
	require.Less(t, rt.Get("maxTTFT").ToFloat(), 150.0, "no call's time holds a pause")
	require.Len(t, job["ttftByTurn"], 3)

	got := vu.drain()
	require.Len(t, got["llm_job_duration"], 1)
	jobTag, _ := got["llm_job_duration"][0].Tags.Get("job")
	require.Equal(t, "conversation", jobTag)
	var turnTags []string
	for _, s := range got["llm_ttft"] {
		v, _ := s.Tags.Get("turn")
		turnTags = append(turnTags, v)
	}
	require.Equal(t, []string{"1", "2", "3"}, turnTags)

	run := vu.root.report.Intake().Snapshot()
	turnGroups, jobGroups := run.Turns, run.Jobs
	var answered uint64
	for _, g := range turnGroups {
		answered += g.Calls
	}
	require.Equal(t, uint64(3), answered, "the report's TTFT by turn has every answered turn")
	require.Len(t, jobGroups, 1)
	require.Equal(t, uint64(1), jobGroups[0].Jobs)
	vu.closeIdle()
}

// A history that outgrows the model's context: the server's 400 is
// classified, the conversation ends by itself (later turns resolve null,
// no request sent), and its job is recorded as failed once.
func TestConversationBeyondContext(t *testing.T) {
	base, trace := startSimBodies(t, func(m *sim.ModelConfig) { m.MaxContextTokens = 60 })
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, model: 'sim'});`, base))
	vu.run(`(async () => {
		const conv = client.conversation({body: {max_tokens: 20}});
		globalThis.results = [];
		for (let i = 0; i < 5; i++) {
			const r = await conv.say('tell me more about the weather today please');
			results.push(r === null ? null : (r.ok ? 'ok' : r.error.type));
		}
		globalThis.job = conv.end();
	})()`)
	rt := vu.rt.VU.Runtime()
	res := plain(rt.Get("results").Export()).([]any)
	require.Equal(t, "ok", res[0])
	failed := -1
	for i, r := range res {
		if r == "http_4xx" {
			failed = i
			break
		}
	}
	require.Positive(t, failed, "a later turn is refused: %v", res)
	for _, r := range res[failed+1:] {
		require.Nil(t, r, "turns after the failure send nothing")
	}
	job := rt.Get("job").Export().(map[string]any)
	require.Equal(t, false, job["ok"])
	require.Equal(t, "http_4xx", job["endReason"])
	reqs := tracedRequests(t, trace, failed+1)
	require.Equal(t, 400, reqs[failed].Status)
	got := vu.drain()
	require.Len(t, got["llm_job_failed"], 1)
	require.InDelta(t, 1.0, got["llm_job_failed"][0].Value, 0)
	vu.closeIdle()
}

// Bad options are named; misuse says what to do.
func TestConversationBadInput(t *testing.T) {
	vu := newTestVU(t, `const client = new llm.Client({baseURL: 'http://127.0.0.1:1', model: 'm'});`)
	for code, want := range map[string]string{
		`client.conversation({thnk: '1s'})`:                                          `thnk`,
		`client.conversation({think: {dist: 'poisson'}})`:                            `poisson`,
		`client.conversation({think: '1s', pace: {users: 2, rate: 1}})`:              `think and pace`,
		`client.conversation({pace: {users: 0, rate: 1}})`:                           `users`,
		`client.conversation({session: {}})`:                                         `session needs`,
		`client.conversation({session: {header: 3}})`:                                `session.header`,
		`client.conversation({history: {maxTurns: -1}})`:                             `negative`,
		`client.conversation({reasoning: 'keep'})`:                                   `keep`,
		`client.conversation({reasoning: 'send', history: {chain: true}})`:           `chain`,
		`client.conversation({body: {messages: []}})`:                                `body.messages`,
		`client.conversation({params: {tag: {}}})`:                                   `tag`,
		`client.conversation({params: {item: {}}})`:                                  `say(item)`,
		`client.conversation().say(42)`:                                              `user's text or a dataset item`,
		`client.conversation().say({id: 'x', messages: []})`:                         `no user message`,
		`client.conversation().say('hi', {item: {}})`:                                `say(item)`,
		`client.conversation().say('hi', {tagz: {}})`:                                `tagz`,
		`(() => { const c = client.conversation(); c.end(); return c.say('hi') })()`: `after end()`,
	} {
		_, err := vu.rt.RunOnEventLoop(code)
		require.ErrorContains(t, err, want, code)
	}
}
