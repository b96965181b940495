package stream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/protocol"
)

// post is the Send of an HTTP client that drains the body as k6 does
// (io.Copy), with the attempt's tap under the client's own transport.
func post(url string, base http.RoundTripper, sentLastEventID *string) Send {
	return func(ctx context.Context, tap *Tap) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{}`))
		if err != nil {
			return &Error{Type: ErrNetwork, Message: err.Error()}
		}
		if id := tap.LastEventID(); id != "" {
			req.Header.Set("Last-Event-ID", id)
		}
		client := &http.Client{Transport: tap.Transport(base)}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if sentLastEventID != nil {
			*sentLastEventID = req.Header.Get("Last-Event-ID")
		}
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
}

func lookup(t *testing.T, name string) *protocol.Spec {
	t.Helper()
	spec, err := protocol.Lookup(name)
	require.NoError(t, err)
	return spec
}

func flush(w http.ResponseWriter, s string) {
	fmt.Fprint(w, s)
	w.(http.Flusher).Flush() //nolint:forcetypeassert // httptest's writer flushes
}

// A whole attempt with net/http alone: t0 at the tap, the response at its
// headers, the body read by the call on the client's first read, the
// connect and send wait from the trace hooks, and the result judged.
func TestAttemptReadsAWholeAnswer(t *testing.T) {
	t.Parallel()
	const step = 20 * time.Millisecond
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("X-Request-Id", "req-7")
		flush(w, `data: {"choices":[{"delta":{"role":"assistant"}}]}`+"\n\n")
		for _, word := range []string{"one ", "two ", "three"} {
			time.Sleep(step)
			flush(w, fmt.Sprintf(`data: {"choices":[{"delta":{"content":%q}}]}`+"\n\n", word))
		}
		flush(w, `data: {"choices":[{"delta":{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	base := &http.Transport{}
	t.Cleanup(base.CloseIdleConnections)
	var setUp time.Duration
	base.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		start := time.Now()
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		ReportSetUp(ctx, time.Since(start))
		setUp += time.Since(start)
		return c, err
	}
	a := Attempt{Config: Config{Spec: lookup(t, "openai-chat")}, Timeouts: Timeouts{Total: 10 * time.Second}}
	call, res := a.Run(context.Background(), post(srv.URL, base, nil))
	require.True(t, res.OK, "%v", res.Err)
	require.NotNil(t, call)
	require.Equal(t, "one two three", res.Text)
	require.Equal(t, "stop", res.FinishReason)
	require.Equal(t, "req-7", res.RequestID)
	require.Equal(t, 200, res.Status)
	require.Equal(t, 3, res.Chunks)
	require.Len(t, res.Gaps, 2)
	require.True(t, res.TTFB.Known() && res.TTFT.Known() && res.E2E.Known(), "ttfb %v ttft %v e2e %v", res.TTFB, res.TTFT, res.E2E)
	require.GreaterOrEqual(t, res.TTFT.Or(0), step, "the first token came a step after the headers")
	require.LessOrEqual(t, res.TTFB.Or(0), res.TTFT.Or(0))
	require.GreaterOrEqual(t, res.E2E.Or(0), 3*step)
	require.Positive(t, res.Connect, "a new connection's set-up is measured")
	require.Positive(t, setUp, "the dial reported its own time")
	require.True(t, res.SendWait.Known(), "the request's headers were written")
	require.GreaterOrEqual(t, res.SendWait.Or(0), time.Duration(0))

	_, again := a.Run(context.Background(), post(srv.URL, base, nil))
	require.True(t, again.OK)
	require.Zero(t, again.Connect, "a reused connection has no set-up")
}

// An error status is a classified failure with the server's Retry-After, and
// the body is drained so the connection can be reused.
func TestAttemptClassifiesAnErrorStatus(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "2")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"error":"slow down"}`)
	}))
	t.Cleanup(srv.Close)
	base := &http.Transport{}
	t.Cleanup(base.CloseIdleConnections)
	a := Attempt{Config: Config{Spec: lookup(t, "openai-chat")}, Timeouts: Timeouts{Total: 10 * time.Second}}
	_, res := a.Run(context.Background(), post(srv.URL, base, nil))
	require.False(t, res.OK)
	require.Equal(t, ErrHTTP429, res.Err.Type)
	require.Contains(t, res.Err.Message, "slow down")
	require.Equal(t, measure.Of(2*time.Second), res.RetryAfter)
}

// The attempt's watchdog classifies its timeouts: a server that sends no
// token within firstToken fails the attempt as timeout_first_token, and the
// request is cancelled (the handler sees its context end).
func TestAttemptTimesOutTheFirstToken(t *testing.T) {
	t.Parallel()
	gone := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		flush(w, `data: {"choices":[{"delta":{"role":"assistant"}}]}`+"\n\n")
		<-r.Context().Done()
		close(gone)
	}))
	t.Cleanup(srv.Close)
	base := &http.Transport{}
	t.Cleanup(base.CloseIdleConnections)
	a := Attempt{Config: Config{Spec: lookup(t, "openai-chat")},
		Timeouts: Timeouts{FirstToken: 50 * time.Millisecond, Total: 10 * time.Second}}
	start := time.Now()
	_, res := a.Run(context.Background(), post(srv.URL, base, nil))
	require.Equal(t, ErrTimeoutFirstToken, res.Err.Type, "%v", res.Err)
	require.Less(t, time.Since(start), 5*time.Second)
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the request was not cancelled")
	}
}

// A request the Send could not make fails the attempt with its own class,
// before any t0: the attempt still has a result.
func TestAttemptTakesTheSendsOwnError(t *testing.T) {
	t.Parallel()
	a := Attempt{Config: Config{Spec: lookup(t, "openai-chat")}, Timeouts: Timeouts{Total: time.Second}}
	_, res := a.Run(context.Background(), func(context.Context, *Tap) error {
		return &Error{Type: ErrNetwork, Message: "invalid URL: nope"}
	})
	require.Equal(t, &Error{Type: ErrNetwork, Message: "invalid URL: nope"}, res.Err)
	_, res = a.Run(context.Background(), func(context.Context, *Tap) error {
		return errors.New("connection refused")
	})
	require.Equal(t, ErrNetwork, res.Err.Type, "any other error is classified")
}

// A raw event stream that broke is reopened by a second attempt that resumes
// the first one's call: its request carries Last-Event-ID, and the call keeps
// its clock and text across the two connections.
func TestAttemptResumesARawStream(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if r.Header.Get("Last-Event-ID") == "" {
			flush(w, "id: 1\ndata: one\n\n")
			conn, _, err := w.(http.Hijacker).Hijack() //nolint:forcetypeassert // httptest's writer hijacks
			if err == nil {
				_ = conn.Close() // the stream breaks
			}
			return
		}
		flush(w, "id: 2\ndata: two\n\n")
	}))
	t.Cleanup(srv.Close)
	base := &http.Transport{}
	t.Cleanup(base.CloseIdleConnections)
	a := Attempt{Config: Config{Spec: lookup(t, "sse")}, Timeouts: Timeouts{Total: 10 * time.Second}}
	call, res := a.Run(context.Background(), post(srv.URL, base, nil))
	require.False(t, res.OK)
	require.Equal(t, ErrNetwork, res.Err.Type, "%v", res.Err)
	require.Equal(t, "1", call.LastEventID())

	var sent string
	a.Resume = call
	again, res := a.Run(context.Background(), post(srv.URL, base, &sent))
	require.Same(t, call, again)
	require.Equal(t, "1", sent)
	require.True(t, res.OK, "%v", res.Err)
	require.Equal(t, "onetwo", res.Text)
	require.Equal(t, 2, res.Chunks)
}

// The client drains the body with io.Copy: the tap body is a WriterTo, so
// no copy buffer is lent to it for the stream's whole life.
var _ io.WriterTo = (*tapBody)(nil)

// A fresh attempt's tap and call are one allocation of the allocator's
// 2048-byte size class (freshAttempt): grown past it, the pair would take
// more than the two apart did (768 and 1408 bytes).
func TestFreshAttemptFitsItsSizeClass(t *testing.T) {
	t.Parallel()
	if size := unsafe.Sizeof(freshAttempt{}); size > 2048 {
		t.Fatalf("a fresh attempt is %d bytes, over the 2048-byte size class", size)
	}
}

// The attempt's context has the total timeout's deadline plus the margin:
// a client that bounds its request by the total plus the margin from a
// later moment, as k6 does, derives a context without a deadline (and a
// timer) of its own. A parent's sooner deadline is the attempt's.
func TestTheAttemptsContextHasTheTotalsDeadline(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		parent time.Duration // the parent context's deadline from now; 0: none
		want   func(start time.Time, parent time.Time) (lo, hi time.Time)
	}{
		{"the total's", 0, func(start, _ time.Time) (time.Time, time.Time) {
			return start.Add(time.Hour + TotalMargin), time.Now().Add(time.Hour + TotalMargin)
		}},
		{"a sooner parent's", time.Minute, func(_, parent time.Time) (time.Time, time.Time) { return parent, parent }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			parent := context.Background()
			var parentDeadline time.Time
			if tc.parent > 0 {
				var cancel context.CancelFunc
				parent, cancel = context.WithTimeout(parent, tc.parent)
				defer cancel()
				parentDeadline, _ = parent.Deadline()
			}
			a := Attempt{Config: Config{Spec: lookup(t, "sse")}, Timeouts: Timeouts{Total: time.Hour}}
			start := time.Now()
			var got, derived time.Time
			var ok bool
			a.Run(parent, func(ctx context.Context, _ *Tap) error {
				got, ok = ctx.Deadline()
				k6, cancel := context.WithTimeout(ctx, time.Hour+TotalMargin)
				defer cancel()
				derived, _ = k6.Deadline()
				return &Error{Type: ErrNetwork, Message: "not sent"}
			})
			lo, hi := tc.want(start, parentDeadline)
			require.True(t, ok)
			require.False(t, got.Before(lo) || got.After(hi), "deadline %v, want in [%v, %v]", got, lo, hi)
			require.Equal(t, got, derived, "the client's bound derives no deadline of its own")
		})
	}
}
