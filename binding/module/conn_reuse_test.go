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
	"gopkg.in/guregu/null.v3"
)

// streamThenLinger answers a chat stream whose body goes on after [DONE]: the
// handler waits, then sets a Server-Timing trailer, so the chunked terminator
// and the trailer arrive in a later read than the terminal event.
func streamThenLinger(linger time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Trailer", "Server-Timing")
		flushed(w, roleChunk+chunk("a", "stop")+usageChunk(3, 1, 0)+"data: [DONE]\n\n")
		time.Sleep(linger)
		w.Header().Set("Server-Timing", "queue;dur=7")
	}
}

// countingServer counts the TCP connections its clients open.
func countingServer(t *testing.T, h http.Handler) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

// An HTTP/1.1 connection is reused only when its body was read to the end: the
// bytes after [DONE] must be read, and the trailer behind them kept.
func TestConnectionReusedAfterTheTerminalEvent(t *testing.T) {
	t.Parallel()
	srv, conns := countingServer(t, streamThenLinger(20*time.Millisecond))
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q});`, srv.URL))
	for i := range 3 {
		res := vu.chat(`{messages: []}`)
		require.Equal(t, true, res["ok"], "call %d: %v", i, res["error"])
		require.Equal(t, map[string]float64{"queue": 7}, res["serverTimings"], "call %d: the Server-Timing trailer after [DONE]", i)
	}
	require.EqualValues(t, 1, conns.Load(), "three calls in a row on one VU must share one connection")
}

// A server that holds the body open after [DONE] does not hold the call: the
// drain gives up at its bound (stream.DefaultDrainTime) and the connection is
// closed instead.
func TestLingeringBodyDoesNotHoldTheCall(t *testing.T) {
	t.Parallel()
	srv, _ := countingServer(t, streamThenLinger(5*time.Second))
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q});`, srv.URL))
	start := time.Now()
	res := vu.chat(`{messages: []}`)
	require.Equal(t, true, res["ok"], "%v", res["error"])
	require.Less(t, time.Since(start), 4*time.Second, "the call waited for the server to end the body")
}

// k6's noVUConnectionReuse holds for the module's connections as for
// k6/http's: a VU's calls share its connections within an iteration, and
// its next iteration's first call (a chat or an embed) dials anew. Without
// the option, the connections live on.
func TestNoVUConnectionReuseClosesBetweenIterations(t *testing.T) {
	t.Parallel()
	srv, conns := countingServer(t, http.HandlerFunc(shortAnswer))
	for _, reuse := range []bool{false, true} {
		conns.Store(0)
		vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, model: 'm'});`, srv.URL+"/v1"))
		vu.state().Options.NoVUConnectionReuse = null.BoolFrom(!reuse)
		chat := func() { require.Equal(t, true, vu.chat(`{messages: [{role: 'user', content: 'hi'}]}`)["ok"]) }
		embed := func() { require.Equal(t, true, vu.call("embed", `{input: 'a'}`)["ok"]) }
		chat()
		chat()
		embed() // answers read whole have a transport of their own
		embed()
		require.EqualValues(t, 2, conns.Load(), "within an iteration the calls share connections")
		vu.state().Iteration++
		chat()
		embed()
		want := int32(4)
		if reuse {
			want = 2
		}
		require.EqualValues(t, want, conns.Load(), "reuse %v: the next iteration's calls", reuse)
		vu.closeIdle()
	}
}
