package module

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// faultCase is one row of the fault matrix: a server misbehaving one way, the
// client options that meet it, and the error type every call must end with.
type faultCase struct {
	name    string
	server  func(t *testing.T) string // returns the base URL
	options string                    // extra Client options (JS)
	want    string
}

func handlerServer(h http.HandlerFunc) func(t *testing.T) string {
	return func(t *testing.T) string {
		t.Helper()
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv.URL
	}
}

// rawServer accepts TCP connections and hands them to serve; it stops them all
// at cleanup.
func rawServer(serve func(net.Conn)) func(t *testing.T) string {
	return func(t *testing.T) string {
		t.Helper()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var conns []net.Conn
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
				wg.Add(1)
				go func() { defer wg.Done(); serve(c) }()
			}
		}()
		t.Cleanup(func() {
			_ = ln.Close()
			mu.Lock()
			for _, c := range conns {
				_ = c.Close()
			}
			mu.Unlock()
			wg.Wait()
		})
		return "http://" + ln.Addr().String()
	}
}

func flushed(w http.ResponseWriter, s string) {
	_, _ = w.Write([]byte(s))
	w.(http.Flusher).Flush() //nolint:forcetypeassert
}

func faultMatrix() []faultCase {
	return []faultCase{
		{"disconnect mid-stream", rawServer(func(c net.Conn) {
			_, _ = c.Read(make([]byte, 4096))
			_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"))
			body := roleChunk + chunk("a", "")
			_, _ = fmt.Fprintf(c, "%x\r\n%s\r\n", len(body), body)
			_ = c.Close()
		}), "", "network"},
		{"stall longer than idle", handlerServer(func(w http.ResponseWriter, r *http.Request) {
			flushed(w, roleChunk+chunk("a", ""))
			<-r.Context().Done()
		}), "timeouts: {idle: '200ms'}", "timeout_idle"},
		{"first token later than firstToken", handlerServer(func(w http.ResponseWriter, r *http.Request) {
			flushed(w, roleChunk+": keep-alive\n\n")
			<-r.Context().Done()
		}), "timeouts: {firstToken: '200ms'}", "timeout_first_token"},
		{"connect that never completes", func(t *testing.T) string {
			// TCP is accepted but the TLS handshake never answers: the
			// connection is never usable.
			u := rawServer(func(c net.Conn) { _, _ = io.Copy(io.Discard, c) })(t)
			return strings.Replace(u, "http://", "https://", 1)
		}, "timeouts: {connect: '200ms'}", "timeout_connect"},
		{"http 500", handlerServer(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(500) }), "", "http_5xx"},
		{"http 503", handlerServer(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) }), "", "http_5xx"},
		{"http 429", handlerServer(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(429)
		}), "", "http_429"},
		{"malformed json chunk", handlerServer(func(w http.ResponseWriter, _ *http.Request) {
			flushed(w, roleChunk+"data: {\"choices\":[{\"delta\":{\"content\":\"a\"\n\n")
		}), "", "decode"},
		{"line over the size limit", handlerServer(func(w http.ResponseWriter, _ *http.Request) {
			flushed(w, roleChunk+chunk(strings.Repeat("x", 8192), "stop"))
		}), "maxEventSize: 1024", "decode"},
		{"invalid utf-8", handlerServer(func(w http.ResponseWriter, _ *http.Request) {
			flushed(w, roleChunk+"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\xff\xfe\"}}]}\n\n")
		}), "", "decode"},
		{"html error page with status 200", handlerServer(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte("<!doctype html><h1>502 Bad Gateway</h1>"))
		}), "", "decode"},
		{"closed before headers", rawServer(func(c net.Conn) {
			_, _ = c.Read(make([]byte, 4096))
			_ = c.Close()
		}), "", "network"},
		{"self-signed TLS certificate", func(t *testing.T) string {
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				flushed(w, roleChunk+chunk("a", "stop"))
			}))
			t.Cleanup(srv.Close)
			return srv.URL
		}, "", "network"},
		{"body over the size limit", handlerServer(func(w http.ResponseWriter, _ *http.Request) {
			for range 100 {
				flushed(w, chunk(strings.Repeat("y", 100), ""))
			}
		}), "maxBodySize: 2048", "decode"},
	}
}

// noLeaks checks, after every other cleanup of the test (servers closed), that
// no goroutine started during the test is still running, but for the receive
// stamps' watcher: one per process, started by the first call that waits for
// a first token, idle while none does.
func noLeaks(t *testing.T) {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	watcher := goleak.IgnoreAnyFunction("github.com/llmstream/xk6-llmstream/internal/rxstamp.(*watcher).run")
	t.Cleanup(func() { goleak.VerifyNone(t, ignore, watcher) })
}

// TestFaultMatrix: every failure is classified, every call is counted once
// (llm_requests = successes + failures), the run goes on, nothing leaks.
func TestFaultMatrix(t *testing.T) {
	for _, fc := range faultMatrix() {
		t.Run(fc.name, func(t *testing.T) {
			noLeaks(t)
			base := fc.server(t)
			opts := "baseURL: " + fmt.Sprintf("%q", base) + ", apiKey: 'sk-secret-123456'"
			if fc.options != "" {
				opts += ", " + fc.options
			}
			vu := newTestVU(t, `const client = new llm.Client({`+opts+`});`)
			const calls = 3
			vu.run(`globalThis.types = []; Promise.all([1,2,3].map(() => client.chat({messages: []})))
				.then(rs => rs.forEach(r => types.push(r.ok ? 'ok' : r.error.type + ': ' + r.error.message)))`)
			types := vu.rt.VU.Runtime().Get("types").Export().([]any) //nolint:forcetypeassert
			require.Len(t, types, calls)
			for _, typ := range types {
				require.True(t, strings.HasPrefix(typ.(string), fc.want+":"), "got %v", typ) //nolint:forcetypeassert
				require.NotContains(t, typ, "sk-secret")
			}
			got := vu.drain()
			require.Len(t, got["llm_requests"], calls)
			require.Len(t, got["llm_failed"], calls)
			require.Len(t, got["llm_errors"], calls)
			for _, s := range got["llm_errors"] {
				require.Equal(t, fc.want, s.Tags.Map()["error_type"])
			}
			// The same VU goes on: a healthy server right after the fault.
			srv, _ := streamServer(t, 0, 0, []string{"ok"})
			vu.run(fmt.Sprintf(`globalThis.after = undefined; new llm.Client({baseURL: %q}).chat({messages: []})
				.then(r => { globalThis.after = r.ok })`, srv.URL))
			require.Equal(t, true, vu.rt.VU.Runtime().Get("after").Export())
			vu.closeIdle()
		})
	}
}

func TestInsecureSkipTLSVerifyAcceptsSelfSigned(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		flushed(w, roleChunk+chunk("a", "stop"))
	}))
	defer srv.Close()
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q});`, srv.URL))
	// k6 builds the VU transport from insecureSkipTLSVerify; this is that transport.
	vu.state().Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec
	res := vu.chat(`{messages: []}`)
	require.Equal(t, true, res["ok"], "%v", res["error"])
}

func TestRetryHonoursRetryAfterWithOneIdempotencyKey(t *testing.T) {
	t.Parallel()
	var (
		calls atomic.Int32
		mu    sync.Mutex
		keys  []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		mu.Unlock()
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		flushed(w, roleChunk+chunk("fine", "stop")+usageChunk(3, 1, 0)+"data: [DONE]\n\n")
	}))
	defer srv.Close()
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q,
		retry: {attempts: 3, on: ['http_429'], idempotencyKey: true, backoff: {base: '10ms'}}});`, srv.URL))
	start := time.Now()
	res := vu.chat(`{messages: []}`)
	require.Equal(t, true, res["ok"], "%v", res["error"])
	require.EqualValues(t, 1, res["retries"])
	require.GreaterOrEqual(t, time.Since(start), time.Second, "the retry waited for Retry-After")
	require.Len(t, keys, 2)
	require.NotEmpty(t, keys[0])
	require.Equal(t, keys[0], keys[1], "one idempotency key for every attempt")
	got := vu.drain()
	require.Len(t, got["llm_requests"], 1, "a retried call is one request")
	require.Equal(t, 1.0, got["llm_retries"][0].Value)
	require.Equal(t, "2", got["llm_ttft"][0].Tags.Map()["attempt"])
	require.Len(t, got["http_reqs"], 2, "k6 saw both HTTP exchanges")

	res = vu.chat(`{messages: []}`) // the same headers as the last call's, but its own key
	require.Equal(t, true, res["ok"], "%v", res["error"])
	require.Len(t, keys, 3)
	require.NotEmpty(t, keys[2])
	require.NotEqual(t, keys[0], keys[2], "each call its own idempotency key")
}

func TestNoRetryAfterPartialOutput(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	base := rawServer(func(c net.Conn) {
		calls.Add(1)
		_, _ = c.Read(make([]byte, 4096))
		_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"))
		body := chunk("partial", "")
		_, _ = fmt.Fprintf(c, "%x\r\n%s\r\n", len(body), body)
		_ = c.Close()
	})(t)
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q,
		retry: {attempts: 3, on: ['network'], backoff: {base: '1ms'}}});`, base))
	res := vu.chat(`{messages: []}`)
	require.Equal(t, "network", res["error"].(map[string]any)["type"]) //nolint:forcetypeassert
	require.EqualValues(t, 0, res["retries"])
	require.Equal(t, "partial", res["text"])
	require.EqualValues(t, 1, calls.Load(), "a partial answer is never asked for twice")
}

func TestFallbackServesAndIsTagged(t *testing.T) {
	t.Parallel()
	var primaryHits atomic.Int32
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		primaryHits.Add(1)
		w.WriteHeader(503)
	}))
	defer bad.Close()
	good, _ := streamServer(t, 0, 0, []string{"small", " model"})
	vu := newTestVU(t, fmt.Sprintf(`
		const small = new llm.Client({baseURL: %q, name: 'small', model: 'tiny'});
		const client = new llm.Client({baseURL: %q, name: 'big', model: 'huge', fallback: small, fallbackOn: ['http_5xx'],
			retry: {attempts: 3, on: ['http_5xx'], backoff: {base: '1ms', max: '2ms'}}});`,
		good.URL, bad.URL))
	const calls = 4
	for i := range calls {
		res := vu.chat(`{messages: []}`)
		require.Equal(t, true, res["ok"], "call %d", i)
		require.Equal(t, "small", res["servedBy"])
		require.Equal(t, "fallback", res["route"])
		require.Equal(t, "small model", res["text"])
		require.EqualValues(t, 3, res["retries"], "two retries on the primary, then the fallback")
		attempts := res["attempts"].([]any) //nolint:forcetypeassert
		require.Len(t, attempts, 4)
		for n, a := range attempts[:3] {
			a := a.(map[string]any) //nolint:forcetypeassert
			require.Equal(t, "primary", a["route"], "attempt %d", n+1)
			require.Equal(t, "big", a["servedBy"])
			require.EqualValues(t, 503, a["status"])
			require.Equal(t, "http_5xx", a["error"].(map[string]any)["type"]) //nolint:forcetypeassert
		}
		last := attempts[3].(map[string]any) //nolint:forcetypeassert
		require.Equal(t, "fallback", last["route"])
		require.Equal(t, true, last["ok"])
		require.Nil(t, last["error"])
	}
	require.EqualValues(t, 3*calls, primaryHits.Load())
	got := vu.drain()
	require.Len(t, got["llm_requests"], calls, "llm_requests counts the user's calls once")
	for _, s := range got["llm_failed"] {
		require.Zero(t, s.Value, "every call was answered: llm_failed is 0")
	}
	require.Len(t, got["llm_failed"], calls)
	require.Empty(t, got["llm_errors"], "no call failed")
	for _, s := range got["llm_requests"] {
		tags := s.Tags.Map()
		require.Equal(t, "fallback", tags["route"])
		require.Equal(t, "small", tags["name"])
		require.Equal(t, "4", tags["attempt"])
	}
	byRoute := map[string]int{}
	for _, s := range got["llm_attempts"] {
		tags := s.Tags.Map()
		byRoute[tags["route"]+"/"+tags["name"]+"/"+tags["status"]+"/"+tags["error_type"]]++
	}
	require.Equal(t, map[string]int{"primary/big/503/http_5xx": 3 * calls, "fallback/small/200/": calls}, byRoute,
		"llm_attempts counts every attempt by route")
}

func TestCancelledVUClosesStreamsAndPushesNothing(t *testing.T) {
	noLeaks(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		flushed(w, roleChunk+chunk("a", ""))
		<-r.Context().Done()
	}))
	defer srv.Close()
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q});`, srv.URL))
	go func() {
		time.Sleep(200 * time.Millisecond)
		vu.rt.CancelContext()
	}()
	start := time.Now()
	vu.run(`globalThis.types = []; Promise.all([1,2].map(() => client.chat({messages: []})))
		.then(rs => rs.forEach(r => types.push(r.error && r.error.type)))`)
	require.Less(t, time.Since(start), 5*time.Second, "streams close when the VU stops")
	require.Equal(t, []any{"canceled", "canceled"}, vu.rt.VU.Runtime().Get("types").Export())
	got := vu.drain()
	require.Empty(t, got["llm_requests"], "no sample after the VU's end")
	vu.closeIdle()
}

func TestHTTPDebugRedactsTheKey(t *testing.T) {
	t.Parallel()
	srv, _ := streamServer(t, 0, 0, []string{"a"})
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, apiKey: 'sk-secret-123456',
		headers: {'X-Api-Key': 'other-secret-9876'}});`, srv.URL))
	vu.state().Options.HTTPDebug.String = "full"
	vu.state().Options.HTTPDebug.Valid = true
	res := vu.chat(`{messages: [{role: 'user', content: 'hello debug'}]}`)
	require.Equal(t, true, res["ok"])
	logs := vu.logs.String()
	require.Contains(t, logs, "Authorization: [REDACTED]")
	require.Contains(t, logs, "hello debug", "full debug shows the body")
	require.NotContains(t, logs, "sk-secret")
	require.NotContains(t, logs, "other-secret")
}

// embed and rerank take their own way to the transport: the dump is
// theirs too, as redacted, and shows the virtual host a Host header names.
func TestHTTPDebugDumpsAnEmbedRedacted(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(shortAnswer))
	t.Cleanup(srv.Close)
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, apiKey: 'sk-secret-123456',
		headers: {Host: 'embed.internal'}});`, srv.URL+"/v1"))
	vu.state().Options.HTTPDebug.String = "full"
	vu.state().Options.HTTPDebug.Valid = true
	require.Equal(t, true, vu.call("embed", `{input: 'hello debug'}`)["ok"])
	logs := vu.logs.String()
	require.Contains(t, logs, "POST /v1/embeddings")
	require.Contains(t, logs, "Host: embed.internal")
	require.Contains(t, logs, "Authorization: [REDACTED]")
	require.Contains(t, logs, "hello debug", "full debug shows the body")
	require.Contains(t, logs, "Response:")
	require.NotContains(t, logs, "sk-secret")
}

func TestRawSSEReconnectsWithLastEventID(t *testing.T) {
	t.Parallel()
	var (
		mu      sync.Mutex
		lastIDs []string
		methods []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		lastIDs = append(lastIDs, r.Header.Get("Last-Event-ID"))
		methods = append(methods, r.Method)
		n := len(lastIDs)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		if n == 1 {
			flushed(w, "retry: 20\nid: 1\ndata: first\n\n")
			conn, _, err := w.(http.Hijacker).Hijack() //nolint:forcetypeassert
			if err == nil {
				_ = conn.Close() // the stream breaks mid-way
			}
			return
		}
		flushed(w, "id: 2\ndata: second\n\n")
	}))
	defer srv.Close()
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, protocol: 'sse',
		reconnect: {attempts: 2, delay: '5s'}});`, srv.URL+"/events"))
	start := time.Now()
	res := vu.chat(`null`)
	require.Equal(t, true, res["ok"], "%v", res["error"])
	require.Equal(t, "firstsecond", res["text"])
	require.EqualValues(t, 1, res["reconnects"])
	require.Less(t, time.Since(start), 4*time.Second, "the server's retry: 20 (ms) replaced the 5 s default")
	mu.Lock()
	require.Equal(t, []string{"", "1"}, lastIDs)
	require.Equal(t, []string{"GET", "GET"}, methods)
	mu.Unlock()
	got := vu.drain()
	require.Len(t, got["llm_requests"], 1)
	require.Equal(t, 1.0, got["llm_reconnects"][0].Value)
}

func TestReconnectIsOnlyForRawStreams(t *testing.T) {
	t.Parallel()
	rt := newTestRuntime(t)
	_, err := rt.VU.Runtime().RunString(`const llm = require('k6/x/llmstream');
		new llm.Client({baseURL: 'http://x', reconnect: {attempts: 1}})`)
	require.ErrorContains(t, err, "reconnect is for raw event streams")
}

// A fallback without fallbackOn takes the failures a retry retries by
// default (a 5xx here), and not the others (a 4xx).
func TestFallbackWithoutFallbackOnTakesTheDefaultRetryErrors(t *testing.T) {
	t.Parallel()
	status := func(code int) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }))
	}
	unavailable, badRequest := status(503), status(400)
	defer unavailable.Close()
	defer badRequest.Close()
	good, _ := streamServer(t, 0, 0, []string{"small"})
	vu := newTestVU(t, fmt.Sprintf(`
		const small = new llm.Client({baseURL: %q, name: 'small'});
		const down = new llm.Client({baseURL: %q, name: 'down', fallback: small});
		const wrong = new llm.Client({baseURL: %q, name: 'wrong', fallback: small});
		var client = down;`,
		good.URL, unavailable.URL, badRequest.URL))
	res := vu.chat(`{messages: []}`)
	require.Equal(t, true, res["ok"])
	require.Equal(t, "small", res["servedBy"])
	require.Equal(t, "fallback", res["route"])
	vu.run(`client = wrong`)
	res = vu.chat(`{messages: []}`)
	require.Equal(t, false, res["ok"])
	require.Equal(t, "wrong", res["servedBy"])
	require.Equal(t, "http_4xx", res["error"].(map[string]any)["type"]) //nolint:forcetypeassert
}
