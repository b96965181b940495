// Package policy decides what a call does between and after its attempts:
// whether to retry and how long to wait first (Retry-After, else backoff), when
// to reopen a raw event stream, when to hand the call to a fallback, what the
// call cost, whether it met its SLO, and when to warn that the load generator
// itself runs late. It runs attempts through a function it is given and knows
// nothing of k6, so every decision is tested with fake attempts.
package policy

import (
	"context"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// Try runs one HTTP attempt; resume is the call of a raw event stream to
// reopen (Last-Event-ID), nil for a fresh attempt.
type Try func(ctx context.Context, resume *stream.Call) (*stream.Call, *stream.Result)

// Route is one way to answer a call: what to try and how to retry it. Info is
// what the caller keeps of the route (its tags, its label) for the attempts
// made on it.
type Route[I any] struct {
	Info      I
	Retry     config.Retry
	Reconnect config.Reconnect
	Prices    *config.Prices // nil: the route's client has no prices
	Try       Try
}

// Run runs the primary route, then the fallback (when there is one) if the
// primary failed in a way fallbackOn names and the test goes on.
func Run[I any](ctx context.Context, primary, fallback *Route[I], fallbackOn map[stream.ErrorType]bool) *Outcome[I] {
	return RunIn(ctx, new(Outcome[I]), primary, fallback, fallbackOn)
}

// RunIn is Run with the outcome made in out, a zero Outcome: a caller can
// make it with what it makes anyway (its routes, which the outcome's
// attempts hold), one allocation fewer.
func RunIn[I any](ctx context.Context, out *Outcome[I], primary, fallback *Route[I],
	fallbackOn map[stream.ErrorType]bool) *Outcome[I] {
	out.Attempts = out.first[:0] // the outcome holds its first attempt
	res := primary.run(ctx, out)
	if !res.OK && fallback != nil && fallbackOn[res.Err.Type] && ctx.Err() == nil {
		fallback.run(ctx, out)
	}
	out.Canceled = ctx.Err() != nil
	return out
}

// run makes the route's attempts until one succeeds or the policy says stop,
// records them in out, and returns the last one's result.
func (r *Route[I]) run(ctx context.Context, out *Outcome[I]) *stream.Result {
	pol := r.Retry
	for n := 1; ; n++ {
		res, reconnects := r.attempt(ctx)
		out.Attempts = append(out.Attempts, Attempt[I]{Route: r, Result: res, Reconnects: reconnects})
		if res.OK || n >= pol.Attempts || ctx.Err() != nil || !pol.On[res.Err.Type] {
			return res
		}
		if res.Chunks > 0 && !pol.AfterOutput {
			return res // never duplicate a partial answer
		}
		if !sleep(ctx, Backoff(pol, n, res)) {
			return res
		}
	}
}

// attempt is one attempt, reopened with Last-Event-ID when a raw event stream
// breaks after some events and the client allows reconnection: the call keeps
// its clock, so the reconnection shows as one long gap.
func (r *Route[I]) attempt(ctx context.Context) (*stream.Result, int) {
	call, res := r.Try(ctx, nil)
	rc := r.Reconnect
	reconnects := 0
	for ; reconnects < rc.Attempts && !res.OK && ctx.Err() == nil; reconnects++ {
		if t := res.Err.Type; t != stream.ErrNetwork && t != stream.ErrTimeoutIdle || call.LastEventID() == "" {
			break
		}
		wait := rc.Delay
		if hint, ok := call.RetryHint(); ok {
			wait = hint
		}
		if !sleep(ctx, wait) {
			break
		}
		call, res = r.Try(ctx, call)
	}
	return res, reconnects
}

// sleep waits d, or less when ctx ends first; it says whether it waited.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
