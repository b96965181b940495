package module

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.k6.io/k6/lib/netext"
	"go.k6.io/k6/lib/types"
	"go.k6.io/k6/metrics"
)

// answer is a short chat stream with usage: 1 000 prompt tokens (400 cached),
// 2 output tokens.
func answer(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = fmt.Fprint(w, roleChunk, chunk("a", ""), chunk("b", "stop"), usageChunk(1000, 2, 400), "data: [DONE]\n\n")
}

func tagOf(t *testing.T, s metrics.Sample, name string) string {
	t.Helper()
	v, _ := s.Tags.Get(name)
	return v
}

// Each HTTP version is what the client asked for, over TLS (ALPN) and in
// cleartext (h2c with prior knowledge), and every llm_* sample says which in
// its proto tag.
func TestHTTPVersionOption(t *testing.T) {
	t.Parallel()
	tlsSrv := tlsServer(t)

	h2c := httptest.NewUnstartedServer(http.HandlerFunc(answer))
	h2c.Config.Protocols = new(http.Protocols)
	h2c.Config.Protocols.SetHTTP1(true)
	h2c.Config.Protocols.SetUnencryptedHTTP2(true)
	h2c.Start()
	t.Cleanup(h2c.Close)

	for _, tc := range []struct{ url, http, want string }{
		{tlsSrv.URL, "1.1", "HTTP/1.1"},
		{tlsSrv.URL, "2", "HTTP/2.0"},
		{h2c.URL, "1.1", "HTTP/1.1"},
		{h2c.URL, "2", "HTTP/2.0"},
		{h2c.URL, "auto", "HTTP/1.1"},
	} {
		t.Run(tc.url[:5]+"/"+tc.http, func(t *testing.T) {
			t.Parallel()
			vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, http: %q});`, tc.url, tc.http))
			// k6's transport trusts the test server's certificate, as a user's would with insecureSkipTLSVerify.
			// Its dialer is k6's, as in a k6 run: the connections are stamped,
			// and their connects wait in the system call.
			dialer := k6Dialer()
			vu.state().Dialer = dialer
			vu.state().Transport = &http.Transport{
				TLSClientConfig: tlsSrv.Client().Transport.(*http.Transport).TLSClientConfig.Clone(), //nolint:forcetypeassert
				DialContext:     dialer.DialContext,
			}
			res := vu.chat(`{messages: []}`)
			require.Equal(t, true, res["ok"], "%v", res["error"])
			require.Equal(t, tc.want, res["proto"])
			got := vu.drain()
			require.NotEmpty(t, got["llm_ttft"])
			for _, s := range got["llm_ttft"] {
				require.Equal(t, tc.want, tagOf(t, s, "proto"))
			}
			require.Positive(t, atomic.LoadInt64(&dialer.BytesRead), "k6 counts the bytes (data_received)")
			vu.closeIdle()
		})
	}
}

// k6's connection timings (its http_req_* samples) and the call's own (its
// connect, its send) both come from trace hooks on the same request: the
// attempt's run after k6's, on a new TLS connection and on a reused one.
func TestK6AndTheCallBothTraceTheRequest(t *testing.T) {
	t.Parallel()
	srv := tlsServer(t)
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, http: '1.1'});`, srv.URL))
	vu.state().Transport = &http.Transport{
		TLSClientConfig: srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone(), //nolint:forcetypeassert
	}
	t.Cleanup(vu.closeIdle)
	for i, opened := range []bool{true, false} {
		res := vu.chat(`{messages: []}`)
		require.Equal(t, true, res["ok"], "%v", res["error"])
		require.NotNil(t, res["sendWait"], "call %d: the request's headers were written (WroteHeaders)", i)
		got := vu.drain()
		require.Len(t, got["http_req_tls_handshaking"], 1, "call %d: k6's sample", i)
		require.Len(t, got["llm_conn_reused"], 1, "call %d", i)
		if opened {
			require.Positive(t, got["http_req_tls_handshaking"][0].Value, "k6 timed the handshake")
			require.Positive(t, got["http_req_connecting"][0].Value, "k6 timed the connect")
			require.Len(t, got["llm_conn_opened"], 1, "the call timed its connect (GetConn, GotConn)")
			require.Zero(t, got["llm_conn_reused"][0].Value)
		} else {
			require.Empty(t, got["llm_conn_opened"])
			require.Equal(t, 1.0, got["llm_conn_reused"][0].Value, "GotConn said the connection was reused")
		}
	}
}

// tlsServer answers over TLS with HTTP/1.1 and HTTP/2 (by ALPN).
func tlsServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(answer))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// k6Dialer is the dialer k6 gives its transport.
func k6Dialer() *netext.Dialer {
	return netext.NewDialer(net.Dialer{}, netext.NewResolver(net.LookupIP, 0, types.DNSfirst, types.DNSpreferIPv4))
}

// Calls in a row on one VU reuse one connection; llm_conn_reused and
// llm_conn_opened say so, per call.
func TestConnectionMetrics(t *testing.T) {
	t.Parallel()
	srv, conns := countingServer(t, http.HandlerFunc(answer))
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q});`, srv.URL))
	for range 4 {
		res := vu.chat(`{messages: []}`)
		require.Equal(t, true, res["ok"], "%v", res["error"])
	}
	got := vu.drain()
	require.EqualValues(t, 1, conns.Load())
	require.Len(t, got["llm_conn_opened"], 1)
	var reused []float64
	for _, s := range got["llm_conn_reused"] {
		reused = append(reused, s.Value)
	}
	require.Equal(t, []float64{0, 1, 1, 1}, reused)
	vu.closeIdle()
}

// A client with prices gives every call its cost: in the result, as llm_cost,
// and in the report; a client without prices gives none.
func TestCostOfACall(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(answer))
	t.Cleanup(srv.Close)
	root := New()
	vu := newTestVUOn(t, root, fmt.Sprintf(`
		const client = new llm.Client({baseURL: %q, prices: {input: 2, cachedInput: 1, output: 10, currency: 'EUR'}});
		const free = new llm.Client({baseURL: %q, name: 'free'});`, srv.URL, srv.URL))
	res := vu.chat(`{messages: []}`)
	require.Equal(t, true, res["ok"], "%v", res["error"])
	cost, ok := res["cost"].(map[string]any)
	require.True(t, ok, "result.cost: %v", res["cost"])
	// 600 uncached prompt tokens at 2, 400 cached at 1, 2 output tokens at 10, per million.
	want := (600*2 + 400*1 + 2*10) / 1e6
	require.InDelta(t, want, cost["total"], 1e-12)
	require.InDelta(t, 400*(2-1)/1e6, cost["savedByCache"], 1e-12)
	require.Equal(t, "EUR", cost["currency"])
	got := vu.drain()
	require.Len(t, got["llm_cost"], 1)
	require.InDelta(t, want, got["llm_cost"][0].Value, 1e-12)

	vu.run(`globalThis.res = undefined; free.chat({messages: []}).then(r => { globalThis.res = r })`)
	require.Nil(t, plain(vu.rt.VU.Runtime().Get("res").Export()).(map[string]any)["cost"]) //nolint:forcetypeassert
	require.Empty(t, vu.drain()["llm_cost"])

	run := root.report.Intake().Snapshot()
	all := run.Category("all").Cost
	require.EqualValues(t, 1, all.Calls)
	require.InDelta(t, want, all.Total, 1e-12)
	vu.closeIdle()
}

// A call long enough for the watcher to tick gets its lag, as llm_client_lag
// and result.clientLag.
func TestClientLagOfACall(t *testing.T) {
	t.Parallel()
	srv, _ := streamServer(t, 120*time.Millisecond, 10*time.Millisecond, []string{"a", "b", "c"})
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q});`, srv.URL))
	res := vu.chat(`{messages: []}`)
	require.Equal(t, true, res["ok"], "%v", res["error"])
	lag, ok := res["clientLag"].(float64)
	require.True(t, ok, "result.clientLag: %v", res["clientLag"])
	require.GreaterOrEqual(t, lag, 0.0)
	require.Len(t, vu.drain()["llm_client_lag"], 1)
	vu.closeIdle()
}

// A first token that comes in one read with the next is flagged, in
// result.ttftLate, llm_ttft_late and the report; one read on its own is not.
// The server here sends the two in one write, which is what a reader that
// came late finds. The other tokens come a step apart that a reader slowed
// by -race on a busy machine still reads apart: a step it is late for merges
// them, and a call with mostly merged gaps is not judged.
func TestFirstTokenReadWithTheNextIsFlagged(t *testing.T) {
	t.Parallel()
	const step = 50 * time.Millisecond
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher) //nolint:forcetypeassert
		_, _ = fmt.Fprint(w, roleChunk, chunk("a", ""), chunk("b", ""))
		fl.Flush()
		for _, tok := range []string{"c", "d", "e"} {
			time.Sleep(step)
			_, _ = fmt.Fprint(w, chunk(tok, ""))
			fl.Flush()
		}
		_, _ = fmt.Fprint(w, chunk("", "stop"), "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	onTime, _ := streamServer(t, 0, step, []string{"a", "b", "c", "d", "e"})
	root := New()
	vu := newTestVUOn(t, root, fmt.Sprintf(`const client = new llm.Client({baseURL: %q}); const onTime = new llm.Client({baseURL: %q});`,
		srv.URL, onTime.URL))
	res := vu.chat(`{messages: []}`)
	require.Equal(t, true, res["ok"], "%v", res["error"])
	require.Equal(t, true, res["ttftLate"])
	vu.run(`globalThis.res = undefined; onTime.chat({messages: []}).then(r => { globalThis.res = r })`)
	require.Equal(t, false, plain(vu.rt.VU.Runtime().Get("res").Export()).(map[string]any)["ttftLate"]) //nolint:forcetypeassert
	late := vu.drain()["llm_ttft_late"]
	require.Len(t, late, 2)
	require.Equal(t, []float64{1, 0}, []float64{late[0].Value, late[1].Value})
	all := root.report.Intake().Snapshot().Category("all")
	require.EqualValues(t, 2, all.TTFTJudged)
	require.EqualValues(t, 1, all.LateFirstReads)
	vu.closeIdle()
}
