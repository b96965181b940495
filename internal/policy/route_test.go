package policy

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/protocol"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// fakeCall is a call of the raw event stream protocol that read body.
func fakeCall(t *testing.T, body string) *stream.Call {
	t.Helper()
	spec, err := protocol.Lookup("sse")
	require.NoError(t, err)
	c := stream.NewCall(stream.Config{Spec: spec}, time.Now())
	require.NoError(t, c.Consume(strings.NewReader(body)))
	return c
}

func failed(t stream.ErrorType) *stream.Result {
	return &stream.Result{Err: &stream.Error{Type: t, Message: string(t)}}
}

func answered() *stream.Result { return &stream.Result{OK: true, Chunks: 3} }

// script is a route whose attempts return results in turn (the last one
// again once they run out) and count themselves.
func script(t *testing.T, name string, results ...*stream.Result) (*Route[string], *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	call := fakeCall(t, "")
	return &Route[string]{
		Info:  name,
		Retry: config.Retry{Attempts: 1, Backoff: config.Backoff{Base: time.Millisecond}},
		Try: func(context.Context, *stream.Call) (*stream.Call, *stream.Result) {
			i := min(int(n.Add(1)), len(results)) - 1
			return call, results[i]
		},
	}, &n
}

func retryOn(types ...stream.ErrorType) config.ErrorTypes {
	on := config.ErrorTypes{}
	for _, t := range types {
		on[t] = true
	}
	return on
}

func TestRetryUntilAnAttemptSucceeds(t *testing.T) {
	t.Parallel()
	r, n := script(t, "p", failed(stream.ErrHTTP429), failed(stream.ErrHTTP429), answered())
	r.Retry.Attempts, r.Retry.On = 5, retryOn(stream.ErrHTTP429)
	out := Run(context.Background(), r, nil, nil)
	require.True(t, out.OK())
	require.Len(t, out.Attempts, 3)
	require.EqualValues(t, 3, n.Load())
	require.False(t, out.Canceled)
	require.False(t, out.ClientLag.Known(), "the caller measures the lag: %v", out.ClientLag)
}

func TestRetryStopsAtTheAttemptLimitAndOnOtherErrors(t *testing.T) {
	t.Parallel()
	r, _ := script(t, "p", failed(stream.ErrHTTP429))
	r.Retry.Attempts, r.Retry.On = 3, retryOn(stream.ErrHTTP429)
	out := Run(context.Background(), r, nil, nil)
	require.False(t, out.OK())
	require.Len(t, out.Attempts, 3, "attempts counts every attempt, the first too")

	r, _ = script(t, "p", failed(stream.ErrHTTP5xx), answered())
	r.Retry.Attempts, r.Retry.On = 3, retryOn(stream.ErrHTTP429)
	out = Run(context.Background(), r, nil, nil)
	require.Len(t, out.Attempts, 1, "a class retry.on does not name is final")
}

// A partial answer is never asked for twice unless afterOutput says so.
func TestRetryAfterOutputOnlyWhenAllowed(t *testing.T) {
	t.Parallel()
	partial := failed(stream.ErrNetwork)
	partial.Chunks = 4
	r, _ := script(t, "p", partial, answered())
	r.Retry.Attempts, r.Retry.On = 3, retryOn(stream.ErrNetwork)
	require.Len(t, Run(context.Background(), r, nil, nil).Attempts, 1)

	r.Retry.AfterOutput = true
	r2, _ := script(t, "p", partial, answered())
	r2.Retry = r.Retry
	out := Run(context.Background(), r2, nil, nil)
	require.Len(t, out.Attempts, 2)
	require.True(t, out.OK())
}

func TestFallbackTakesTheFailuresItNames(t *testing.T) {
	t.Parallel()
	primary, _ := script(t, "primary", failed(stream.ErrHTTP5xx))
	fallback, fn := script(t, "fallback", answered())
	out := Run(context.Background(), primary, fallback, retryOn(stream.ErrHTTP5xx))
	require.True(t, out.OK())
	require.Len(t, out.Attempts, 2)
	require.Equal(t, "primary", out.Attempts[0].Route.Info)
	require.Equal(t, "fallback", out.Final().Route.Info, "the answer is the fallback's")

	out = Run(context.Background(), primary, fallback, retryOn(stream.ErrHTTP429))
	require.Len(t, out.Attempts, 1, "a failure fallbackOn does not name stays the primary's")
	require.EqualValues(t, 1, fn.Load())
	require.Equal(t, stream.TTFTUnjudged, out.TTFTCheck(), "a failed call is not judged")
}

// The end of the test ends the wait for the next attempt, and the call is
// not a data point.
func TestCancellationEndsTheBackoff(t *testing.T) {
	t.Parallel()
	r, n := script(t, "p", failed(stream.ErrHTTP429))
	r.Retry = config.Retry{Attempts: 3, On: retryOn(stream.ErrHTTP429), Backoff: config.Backoff{Base: time.Hour}}
	fb, fn := script(t, "f", answered())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	out := Run(ctx, r, fb, retryOn(stream.ErrHTTP429))
	require.Less(t, time.Since(start), 10*time.Second)
	require.True(t, out.Canceled)
	require.EqualValues(t, 1, n.Load())
	require.EqualValues(t, 0, fn.Load(), "no fallback once the test is over")
}

// A raw event stream that breaks after an event with an id is reopened with
// it, after the delay its retry: field asked for.
func TestReconnectReopensARawStream(t *testing.T) {
	t.Parallel()
	broken := fakeCall(t, "retry: 1\nid: 7\ndata: one\n\n")
	require.Equal(t, "7", broken.LastEventID())
	var resumed []*stream.Call
	r := &Route[string]{
		Retry:     config.Retry{Attempts: 1},
		Reconnect: config.Reconnect{Attempts: 2, Delay: time.Hour}, // the retry: hint (1 ms) wins
		Try: func(_ context.Context, resume *stream.Call) (*stream.Call, *stream.Result) {
			resumed = append(resumed, resume)
			if len(resumed) < 3 {
				return broken, failed(stream.ErrNetwork)
			}
			return broken, answered()
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := Run(ctx, r, nil, nil)
	require.True(t, out.OK())
	require.Len(t, out.Attempts, 1, "reconnections are part of one attempt")
	require.Equal(t, 2, out.Final().Reconnects)
	require.Equal(t, []*stream.Call{nil, broken, broken}, resumed)

	noID := fakeCall(t, "data: one\n\n")
	r2 := &Route[string]{Retry: config.Retry{Attempts: 1}, Reconnect: config.Reconnect{Attempts: 2},
		Try: func(context.Context, *stream.Call) (*stream.Call, *stream.Result) {
			return noID, failed(stream.ErrNetwork)
		}}
	require.Equal(t, 0, Run(ctx, r2, nil, nil).Final().Reconnects, "without an event id there is nothing to resume")
}

// RunIn runs the call in the outcome it is given, as Run does in one of
// its own.
func TestRunInFillsTheOutcomeItIsGiven(t *testing.T) {
	t.Parallel()
	primary, _ := script(t, "primary", failed(stream.ErrHTTP5xx))
	fallback, _ := script(t, "fallback", answered())
	var out Outcome[string]
	got := RunIn(context.Background(), &out, primary, fallback, retryOn(stream.ErrHTTP5xx))
	require.Same(t, &out, got)
	require.Len(t, out.Attempts, 2)
	require.Equal(t, []string{"primary", "fallback"}, []string{out.Attempts[0].Route.Info, out.Final().Route.Info})
	require.True(t, out.OK())
	require.False(t, out.Canceled)
}
