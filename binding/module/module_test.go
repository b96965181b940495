package module

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grafana/sobek"
	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/require"
	"go.k6.io/k6/js/modulestest"
	"go.k6.io/k6/lib"
	"go.k6.io/k6/metrics"
	"gopkg.in/guregu/null.v3"
)

// testVU is a k6 VU with this module loaded, moved to the VU context, whose
// samples can be read back.
type testVU struct {
	t       testing.TB
	rt      *modulestest.Runtime
	samples chan metrics.SampleContainer
	logs    *strings.Builder
	root    *RootModule
}

// newTestRuntime is a VU in the init context with the module available.
func newTestRuntime(t *testing.T) *modulestest.Runtime {
	t.Helper()
	rt := modulestest.NewRuntime(t)
	require.NoError(t, rt.SetupModuleSystem(map[string]any{ImportPath: New()}, nil, nil))
	return rt
}

// newTestVU runs initCode in the init context (with `llm` bound to the module),
// then moves the VU to its VU context.
func newTestVU(t testing.TB, initCode string) *testVU {
	t.Helper()
	return newTestVUOn(t, New(), initCode)
}

// newTestVUOn is newTestVU on a given root module, for tests that read its
// process-wide state (the report collector).
func newTestVUOn(t testing.TB, root *RootModule, initCode string) *testVU {
	t.Helper()
	return newTestVUWith(t, root, nil, initCode)
}

// newTestVUWith is newTestVUOn with setup run on the runtime before the
// module is imported (its file systems, its script's directory).
func newTestVUWith(t testing.TB, root *RootModule, setup func(*modulestest.Runtime), initCode string) *testVU {
	t.Helper()
	return newTestVUModules(t, root, nil, setup, initCode)
}

// newTestVUModules is newTestVUWith with other modules importable beside
// this one (k6's own, by import path).
func newTestVUModules(t testing.TB, root *RootModule, others map[string]any, setup func(*modulestest.Runtime),
	initCode string,
) *testVU {
	t.Helper()
	rt := modulestest.NewRuntime(t)
	if setup != nil {
		setup(rt)
	}
	mods := map[string]any{ImportPath: root}
	for path, m := range others {
		mods[path] = m
	}
	require.NoError(t, rt.SetupModuleSystem(mods, nil, nil))
	_, err := rt.VU.Runtime().RunString(`const llm = require('k6/x/llmstream');` + initCode)
	require.NoError(t, err)

	samples := make(chan metrics.SampleContainer, 10000)
	registry := rt.VU.InitEnvField.Registry
	logs := &strings.Builder{}
	logger := logrus.New()
	logger.SetOutput(logs)
	state := &lib.State{
		Options: lib.Options{
			SystemTags:   &metrics.DefaultSystemTagSet,
			MaxRedirects: null.IntFrom(10),
			UserAgent:    null.StringFrom("k6-llmstream-test"),
		},
		Logger:         logger,
		Transport:      &http.Transport{DisableCompression: true},
		BufferPool:     lib.NewBufferPool(),
		Samples:        samples,
		Tags:           lib.NewVUStateTags(registry.RootTagSet().With("vu_tag", "1")),
		BuiltinMetrics: rt.BuiltinMetrics,
	}
	rt.MoveToVUContext(state)
	return &testVU{t: t, rt: rt, samples: samples, logs: logs, root: root}
}

// run executes code on the event loop and waits for every promise.
func (v *testVU) run(code string) sobek.Value {
	v.t.Helper()
	val, err := v.rt.RunOnEventLoop(code)
	require.NoError(v.t, err)
	return val
}

// result runs `client.chat(body, params)` and returns the resolved result.
func (v *testVU) chat(args string) map[string]any {
	v.t.Helper()
	v.run(`globalThis.res = undefined; client.chat(` + args + `).then(r => { globalThis.res = r })`)
	res := v.rt.VU.Runtime().Get("res")
	require.NotNil(v.t, res)
	require.False(v.t, sobek.IsUndefined(res), "promise did not resolve")
	return plain(res.Export()).(map[string]any) //nolint:forcetypeassert
}

// plain is an exported JS value with every call result in it (read from
// its record on access, binding/calls/result.go) as the map a plain
// object exports to.
func plain(v any) any {
	switch x := v.(type) {
	case interface{ Plain() map[string]any }:
		return x.Plain()
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = plain(e)
		}
		return out
	}
	return v
}

// state is the VU's k6 state, for tests that change options.
func (v *testVU) state() *lib.State { return v.rt.VU.StateField }

// closeIdle closes kept-alive connections, so goroutine checks see only leaks:
// k6's transport's and the clients' own (one per HTTP version).
func (v *testVU) closeIdle() {
	if tr, ok := v.state().Transport.(*http.Transport); ok {
		tr.CloseIdleConnections()
	}
	v.root.closeIdleConnections()
}

// drain returns the samples pushed so far, by metric name.
func (v *testVU) drain() map[string][]metrics.Sample {
	out := map[string][]metrics.Sample{}
	for {
		select {
		case c := <-v.samples:
			for _, s := range c.GetSamples() {
				out[s.Metric.Name] = append(out[s.Metric.Name], s)
			}
		default:
			return out
		}
	}
}

// chunk renders one OpenAI chat.completion.chunk event.
func chunk(content string, finish string) string {
	fr := "null"
	if finish != "" {
		fr = `"` + finish + `"`
	}
	return fmt.Sprintf("data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":"+
		"[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":%s}]}\n\n", content, fr)
}

const roleChunk = "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":" +
	"[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n"

func usageChunk(prompt, completion, cached int) string {
	return fmt.Sprintf("data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[],"+
		"\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d,\"total_tokens\":%d,"+
		"\"prompt_tokens_details\":{\"cached_tokens\":%d}}}\n\n", prompt, completion, prompt+completion, cached)
}

// streamServer writes the role chunk, then each token after delay, then a
// finish chunk, usage and [DONE]. It records the last request it saw.
func streamServer(t *testing.T, delayFirst, delay time.Duration, tokens []string) (*httptest.Server, func() *http.Request) {
	t.Helper()
	var (
		mu   sync.Mutex
		seen *http.Request
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = r.Clone(context.Background())
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("X-Request-Id", "req-42")
		fl := w.(http.Flusher) //nolint:forcetypeassert
		_, _ = fmt.Fprint(w, roleChunk)
		fl.Flush()
		time.Sleep(delayFirst)
		for i, tok := range tokens {
			if i > 0 {
				time.Sleep(delay)
			}
			_, _ = fmt.Fprint(w, chunk(tok, ""))
			fl.Flush()
		}
		_, _ = fmt.Fprint(w, chunk("", "stop"), usageChunk(12, len(tokens), 0), "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv, func() *http.Request {
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

func TestExportsAndMetricsRegisteredInInit(t *testing.T) {
	t.Parallel()
	rt := modulestest.NewRuntime(t)
	require.NoError(t, rt.SetupModuleSystem(map[string]any{ImportPath: New()}, nil, nil))
	v, err := rt.VU.Runtime().RunString(`const llm = require('k6/x/llmstream'); typeof llm.Client`)
	require.NoError(t, err)
	require.Equal(t, "function", v.String())
	reg := rt.VU.InitEnvField.Registry
	for _, name := range []string{
		"llm_ttfb", "llm_ttft", "llm_ttft_answer", "llm_inter_token_gap", "llm_tpot", "llm_tokens_per_sec",
		"llm_e2e", "llm_client_parse_time", "llm_requests", "llm_errors", "llm_failed", "llm_prompt_tokens",
		"llm_output_tokens", "llm_cached_tokens", "llm_reasoning_tokens", "llm_cache_hit", "llm_stalls",
		"llm_goodput", "llm_retries",
	} {
		require.NotNil(t, reg.Get(name), name)
	}
}

func TestClientOptionErrors(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		`new llm.Client()`:                     "options are required",
		`new llm.Client({})`:                   "baseURL is required",
		`new llm.Client({baseURL: 'ftp://x'})`: "must start with http",
		`new llm.Client({baseURL: 'http://x', protocol: 'carrier'})`:     "protocol must be one of",
		`new llm.Client({baseURL: 'http://x', timeouts: {idle: 'x'}})`:   "timeouts.idle must be a duration",
		`new llm.Client({baseURL: 'http://x', gapSamples: 'all'})`:       "gapSamples must be",
		`new llm.Client({baseURL: 'http://x', bogus: 1})`:                `unknown option "bogus"`,
		`new llm.Client({baseURL: 'http://x', retry: {on: ['nope']}})`:   "retry.on[0] must be one of",
		`new llm.Client({baseURL: 'http://x', fallback: {}})`:            "fallback must be another Client",
		`new llm.Client({baseURL: 'http://x', timeouts: {total: 0}})`:    "total must be greater than 0",
		`new llm.Client({baseURL: 'http://x', tokenizer: 'klingon'})`:    "unknown tokenizer",
		`new llm.Client({baseURL: 'http://x', slo: {ttft: '-1s'}})`:      "slo.ttft must be",
		`new llm.Client({baseURL: 'http://x', maxEventSize: 1.5})`:       "positive whole number",
		`new llm.Client({baseURL: 'http://x', headers: {a: {b: 1}}})`:    "must be a string",
		`new llm.Client({baseURL: 'http://x', retry: {attempts: 1000}})`: "at most 100",
	}
	for code, want := range cases {
		rt := modulestest.NewRuntime(t)
		require.NoError(t, rt.SetupModuleSystem(map[string]any{ImportPath: New()}, nil, nil))
		_, err := rt.VU.Runtime().RunString(`const llm = require('k6/x/llmstream');` + code)
		require.ErrorContains(t, err, want, code)
	}
}

// A Client's methods are functions made once: the same one at every read,
// bound to their Client (a method passed around still calls it), listed by
// Object.keys; the object takes no properties of its own, as the Go value
// it was before did not.
func TestClientObjectMethods(t *testing.T) {
	t.Parallel()
	rt := modulestest.NewRuntime(t)
	require.NoError(t, rt.SetupModuleSystem(map[string]any{ImportPath: New()}, nil, nil))
	v, err := rt.VU.Runtime().RunString(`const llm = require('k6/x/llmstream');
		const client = new llm.Client({baseURL: 'http://127.0.0.1:1'});
		const chat = client.chat;
		JSON.stringify([client.chat === client.chat, typeof client.embed, Object.keys(client), 'rerank' in client,
			'bogus' in client, client.bogus === undefined, client.chat.length, client.embed.length])`)
	require.NoError(t, err)
	require.JSONEq(t, `[true, "function", ["agent", "chat", "conversation", "embed", "rerank"], true, false, true, 2, 2]`,
		v.String())
	_, err = rt.VU.Runtime().RunString(`'use strict'; client.bogus = 1`)
	require.Error(t, err)
	_, err = rt.VU.Runtime().RunString(`'use strict'; client.chat = null`)
	require.Error(t, err)
	_, err = rt.VU.Runtime().RunString(`chat({messages: []})`) // unbound: still this client's, refused in init
	require.ErrorContains(t, err, "VU context")

	vu := newTestVU(t, `const client = new llm.Client({baseURL: 'http://127.0.0.1:1'});`)
	_, err = vu.rt.RunOnEventLoop(`client.chat()`) // a missing body is one, thrown as a JS error
	require.ErrorContains(t, err, "body is required")
	_, err = vu.rt.RunOnEventLoop(`try { client.embed() } catch (e) { if (!(e instanceof Error)) throw 'not an Error' }`)
	require.NoError(t, err)
}

func TestNonStreamedBodyIsRefused(t *testing.T) {
	t.Parallel()
	vu := newTestVU(t, `const client = new llm.Client({baseURL: 'http://127.0.0.1:1'});`)
	_, err := vu.rt.RunOnEventLoop(`client.chat({messages: [], stream: false})`)
	require.ErrorContains(t, err, "body.stream is false")
}

func TestChatInInitContextIsAnError(t *testing.T) {
	t.Parallel()
	rt := modulestest.NewRuntime(t)
	require.NoError(t, rt.SetupModuleSystem(map[string]any{ImportPath: New()}, nil, nil))
	_, err := rt.VU.Runtime().RunString(`const llm = require('k6/x/llmstream');
		new llm.Client({baseURL: 'http://127.0.0.1:1'}).chat({messages: []})`)
	require.ErrorContains(t, err, "VU context")
}

func TestChatStreamsAndEmitsMetrics(t *testing.T) {
	t.Parallel()
	srv, lastRequest := streamServer(t, 60*time.Millisecond, 20*time.Millisecond, []string{"Hel", "lo", " wor", "ld"})
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, model: 'm1', name: 'chat',
		apiKey: 'sk-secret-123456'});`, srv.URL+"/v1"))
	res := vu.chat(`{messages: [{role: 'user', content: 'hi'}], max_tokens: 4}, {tags: {category: 'short'}}`)

	require.Equal(t, true, res["ok"], "%v", res["error"])
	require.Equal(t, "Hello world", res["text"])
	require.Equal(t, "stop", res["finishReason"])
	require.Equal(t, "usage", res["tokenSource"])
	require.EqualValues(t, 4, res["outputTokens"])
	require.EqualValues(t, 4, res["chunks"])
	require.Equal(t, "req-42", res["requestId"])
	// The server slept 60 ms before the first token and 20 ms between tokens.
	require.GreaterOrEqual(t, res["ttft"], 60.0)
	require.GreaterOrEqual(t, res["e2e"], 120.0)
	require.Greater(t, res["ttft"], res["ttfb"])
	// The last token left the server ≥120 ms after t0; reads can be late (merging
	// events into one read) but never early, so this bound holds on any machine.
	require.GreaterOrEqual(t, res["ttft"].(float64)+3*res["tpot"].(float64), 120.0) //nolint:forcetypeassert
	require.Nil(t, res["gaps"])

	// The request: streaming flags set, body passed through, key in the header only.
	seen := lastRequest()
	require.Equal(t, "/v1/chat/completions", seen.URL.Path)
	require.Equal(t, "Bearer sk-secret-123456", seen.Header.Get("Authorization"))
	require.Equal(t, "identity", seen.Header.Get("Accept-Encoding"))
	require.Equal(t, "k6-llmstream-test", seen.Header.Get("User-Agent"))

	got := vu.drain()
	require.Len(t, got["llm_requests"], 1)
	require.Len(t, got["llm_inter_token_gap"], 3) // four output events, three gaps
	gapSum := 0.0
	for _, s := range got["llm_inter_token_gap"] {
		gapSum += s.Value
	}
	require.GreaterOrEqual(t, got["llm_ttft"][0].Value+gapSum, 120.0)
	require.Equal(t, 0.0, got["llm_failed"][0].Value)
	require.Len(t, got["http_reqs"], 1, "k6's own HTTP metrics are emitted")
	tags := got["llm_ttft"][0].Tags.Map()
	require.Equal(t, "short", tags["category"])
	require.Equal(t, "m1", tags["model"])
	require.Equal(t, "openai-chat", tags["protocol"])
	require.Equal(t, "chat", tags["name"])
	require.Equal(t, "200", tags["status"])
	require.Equal(t, "miss", tags["cache"])
	require.Equal(t, "1", tags["vu_tag"])
	for _, ss := range got {
		for _, s := range ss {
			for k, v := range s.Tags.Map() {
				require.NotContains(t, v, "sk-secret", k)
			}
		}
	}
	require.Equal(t, 12.0, got["llm_prompt_tokens"][0].Value)

}

func TestParallelStreamsInOneVU(t *testing.T) {
	t.Parallel()
	// The server answers nobody until all four requests are in flight: a client
	// that ran the streams one after another would wait here and fail.
	const streams = 4
	var (
		mu      sync.Mutex
		arrived int
		allIn   = make(chan struct{})
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		if arrived++; arrived == streams {
			close(allIn)
		}
		mu.Unlock()
		select {
		case <-allIn:
		case <-time.After(5 * time.Second):
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		flushed(w, roleChunk+chunk("a", "")+chunk("b", "stop")+"data: [DONE]\n\n")
	}))
	defer srv.Close()
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q});`, srv.URL))
	vu.run(`globalThis.all = undefined; Promise.all([1,2,3,4].map(() => client.chat({messages: []})))
		.then(rs => { globalThis.all = rs.map(r => r.ok && r.text) })`)
	require.Equal(t, []any{"ab", "ab", "ab", "ab"}, vu.rt.VU.Runtime().Get("all").Export())
	require.Len(t, vu.drain()["llm_requests"], streams)
}

func TestFailuresResolveClassified(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"http 429", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"error":{"message":"slow down"}}`))
		}, "http_429"},
		{"http 500", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(500) }, "http_5xx"},
		{"http 401", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(401)
			_, _ = w.Write([]byte(`{"error":{"message":"Incorrect API key provided: sk-secret-123456"}}`))
		}, "http_4xx"},
		{"html page with 200", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("<html><body>Gateway says hi</body></html>"))
		}, "decode"},
		{"plain text body", func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte("not a stream at all"))
		}, "truncated"},
		{"invalid json chunk", func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(roleChunk + "data: {\"choices\": [oops\n\n"))
		}, "decode"},
		{"error event mid-stream", func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(chunk("a", "") + "data: {\"error\":{\"message\":\"overloaded\",\"code\":\"503\"}}\n\n"))
		}, "stream_error"},
		{"connection reset mid-stream", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.(http.Flusher).Flush() //nolint:forcetypeassert
			_, _ = w.Write([]byte(chunk("a", "")))
			w.(http.Flusher).Flush()                   //nolint:forcetypeassert
			conn, _, err := w.(http.Hijacker).Hijack() //nolint:forcetypeassert
			if err == nil {
				_ = conn.Close()
			}
		}, "network"},
		// [DONE] after output completes an answer without a finish reason
		// (docs/protocols.md); a stream with neither ends truncated.
		{"ends without finish or [DONE]", func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(chunk("a", "")))
		}, "truncated"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, apiKey: 'sk-secret-123456'});`, srv.URL))
			res := vu.chat(`{messages: []}`)
			require.Equal(t, false, res["ok"])
			errObj := res["error"].(map[string]any) //nolint:forcetypeassert
			require.Equal(t, tc.want, errObj["type"], "%v", errObj["message"])
			require.NotContains(t, errObj["message"], "sk-secret-123456")
			got := vu.drain()
			require.Len(t, got["llm_requests"], 1)
			require.Equal(t, 1.0, got["llm_failed"][0].Value)
			require.Equal(t, tc.want, got["llm_errors"][0].Tags.Map()["error_type"])
			require.NotContains(t, vu.logs.String(), "sk-secret")
		})
	}
}

func TestOnEventCallbacksRunOnTheLoopAfterTiming(t *testing.T) {
	t.Parallel()
	srv, _ := streamServer(t, 0, 5*time.Millisecond, []string{"x", "y", "z"})
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q});`, srv.URL))
	vu.run(`globalThis.seen = []; client.chat({messages: []}, {onEvent: (e) => {
		// A slow callback must not slow the stream's clock.
		const until = Date.now() + 100; while (Date.now() < until) {}
		seen.push(e.data === '[DONE]' ? 'DONE' : JSON.parse(e.data).choices.length)
	}}).then(r => { globalThis.res = r })`)
	seen := vu.rt.VU.Runtime().Get("seen").Export()
	require.Equal(t, []any{int64(1), int64(1), int64(1), int64(1), int64(1), int64(0), "DONE"}, seen)
	res := plain(vu.rt.VU.Runtime().Get("res").Export()).(map[string]any) //nolint:forcetypeassert
	require.Equal(t, true, res["ok"])
	// Seven callbacks of 100 ms each would add ≥ 600 ms if they were in the timing
	// path; the stream itself takes ~10 ms.
	require.Less(t, res["e2e"], 500.0)
}

func TestConnectAndIdleTimeouts(t *testing.T) {
	t.Parallel()
	stall := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(chunk("a", "")))
		w.(http.Flusher).Flush() //nolint:forcetypeassert
		<-r.Context().Done()
	}))
	defer stall.Close()
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q,
		timeouts: {idle: '150ms', firstToken: '5s', total: '10s'}});`, stall.URL))
	res := vu.chat(`{messages: []}`)
	require.Equal(t, "timeout_idle", res["error"].(map[string]any)["type"]) //nolint:forcetypeassert

	slowFirst := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(roleChunk))
		w.(http.Flusher).Flush() //nolint:forcetypeassert
		<-r.Context().Done()
	}))
	defer slowFirst.Close()
	vu = newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q,
		timeouts: {firstToken: '150ms', total: '10s'}});`, slowFirst.URL))
	res = vu.chat(`{messages: []}`)
	require.Equal(t, "timeout_first_token", res["error"].(map[string]any)["type"]) //nolint:forcetypeassert

	vu = newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q,
		timeouts: {total: '200ms'}});`, stall.URL))
	res = vu.chat(`{messages: []}`)
	require.Equal(t, "timeout_total", res["error"].(map[string]any)["type"]) //nolint:forcetypeassert
}

// With n > 1 the result has each answer's text, finish reason and gaps.
func TestSeveralChoicesInTheResult(t *testing.T) {
	t.Parallel()
	piece := func(i int, content, finish string) string {
		fr := "null"
		if finish != "" {
			fr = `"` + finish + `"`
		}
		return fmt.Sprintf("data: {\"choices\":[{\"index\":%d,\"delta\":{\"content\":%q},\"finish_reason\":%s}]}\n\n", i, content, fr)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = fmt.Fprint(w, piece(0, "Yes", ""), piece(1, "No", ""), piece(0, ".", ""), piece(1, "!", ""),
			piece(1, "", "length"), piece(0, "", "stop"), "data: [DONE]\n\n")
	}))
	defer srv.Close()
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q});`, srv.URL))
	res := vu.chat(`{messages: [], n: 2}, {gaps: true}`)
	require.Equal(t, true, res["ok"], "%v", res["error"])
	require.Equal(t, "Yes.", res["text"])
	choices := res["choices"].([]any) //nolint:forcetypeassert
	require.Len(t, choices, 2)
	second := choices[1].(map[string]any) //nolint:forcetypeassert
	require.Equal(t, "No!", second["text"])
	require.Equal(t, "length", second["finishReason"])
	require.Len(t, second["gaps"], 1, "a gap is between two pieces of the same answer")
	require.Len(t, res["gaps"], 2)
	one, _ := streamServer(t, 0, 0, []string{"a", "b"})
	vu = newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q});`, one.URL))
	require.Nil(t, vu.chat(`{messages: []}`)["choices"], "one answer: no choices list")
}

// The first VU's init loads the system's CA certificates, before any call.
func TestSystemCertsLoadedInInit(t *testing.T) {
	root := New()
	newTestVUOn(t, root, "")
	root.certs.Do(func() { t.Error("the certificates were not loaded in the init context") })
}
