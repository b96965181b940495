package stream

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A request seen twice under the same client trace gets the attempt's hooks
// once, after the client's; another trace gets them too, and the first
// keeps calling both.
func TestHooksChainOnceIntoEachClientTrace(t *testing.T) {
	t.Parallel()
	tap := &Tap{call: NewCall(Config{Spec: lookup(t, "openai-chat")}, time.Time{})}
	tap.watchdog.Init(Timeouts{}, func(error) {})
	tap.hooks.bind(tap)
	var order []string
	client := func(name string) *httptrace.ClientTrace {
		return &httptrace.ClientTrace{
			GetConn:      func(string) { order = append(order, name+" getConn") },
			WroteHeaders: func() { order = append(order, name+" wroteHeaders") },
		}
	}
	first, second := client("first"), client("second")
	req := func(ct *httptrace.ClientTrace) *http.Request {
		r, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), ct), http.MethodGet, "http://x", nil)
		require.NoError(t, err)
		return r
	}
	r := req(first)
	require.Same(t, r, tap.traced(tap.traced(r)), "chained in place, not composed")
	first.GetConn("x")
	require.Equal(t, []string{"first getConn"}, order)
	require.False(t, tap.watchdog.dialStart.IsZero(), "the attempt's hook ran after the client's")
	tap.traced(req(second))
	second.WroteHeaders()
	first.WroteHeaders()
	require.Equal(t, []string{"first getConn", "second wroteHeaders", "first wroteHeaders"}, order)
	require.NotNil(t, tap.call.sent.Load())
}

// Under a client that traces every request afresh (k6's tracing transport),
// a redirected attempt's hooks run in each hop's trace, the client's first.
func TestHooksUnderAClientTracingEveryHop(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/final" {
			http.Redirect(w, r, "/final", http.StatusTemporaryRedirect)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		flush(w, `data: {"choices":[{"delta":{"content":"hi"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	base := &http.Transport{}
	t.Cleanup(base.CloseIdleConnections)
	var gotConn, wrote atomic.Int32
	a := Attempt{Config: Config{Spec: lookup(t, "openai-chat")}, Timeouts: Timeouts{Total: 10 * time.Second}}
	_, r := a.Run(context.Background(), func(ctx context.Context, tap *Tap) error {
		tracing := roundTripFunc(func(req *http.Request) (*http.Response, error) {
			ct := &httptrace.ClientTrace{
				GotConn:      func(httptrace.GotConnInfo) { gotConn.Add(1) },
				WroteHeaders: func() { wrote.Add(1) },
			}
			return tap.Transport(base).RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), ct)))
		})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(`{}`))
		if err != nil {
			return err
		}
		resp, err := (&http.Client{Transport: tracing}).Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	})
	require.True(t, r.OK, "%v", r.Err)
	require.Equal(t, "hi", r.Text)
	require.EqualValues(t, 2, gotConn.Load(), "the client's hooks ran at each hop")
	require.EqualValues(t, 2, wrote.Load())
	require.True(t, r.Sent)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
