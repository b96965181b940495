package llmstream

// Retries, reconnection and fallback: a call runs its route's attempts until
// one succeeds or the policy says stop, then the fallback's when the primary
// failed in a way the client routes. It returns the outcome; it pushes
// nothing (outcome.go fans it out).

import (
	"context"
	"crypto/rand"
	"math"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// Route names, in the route tag and the report.
const (
	routePrimary  = "primary"
	routeFallback = "fallback"
)

// routePlan is one way to answer a call: what to try, and how to retry it.
type routePlan struct {
	info      *routeInfo
	retry     config.Retry
	reconnect config.Reconnect
	// try runs one HTTP attempt; resume is the call of a raw event stream to
	// reopen, nil for a fresh attempt.
	try   func(ctx context.Context, resume *stream.Call) (*stream.Call, *stream.Result)
	close func()
}

// runRoutes runs the primary route, then the fallback when the primary failed
// in a way fallbackOn names and the test goes on.
func runRoutes(ctx context.Context, primary, fallback *routePlan, fallbackOn map[stream.ErrorType]bool) *outcome {
	out := &outcome{}
	res := primary.run(ctx, out)
	if !res.OK && fallback != nil && fallbackOn[res.Err.Type] && ctx.Err() == nil {
		fallback.run(ctx, out)
	}
	out.canceled = ctx.Err() != nil
	return out
}

// run makes the route's attempts until one succeeds or the policy says stop,
// records them in out, and returns the last one's result.
func (r *routePlan) run(ctx context.Context, out *outcome) *stream.Result {
	pol := r.retry
	for n := 1; ; n++ {
		res, reconnects := r.attempt(ctx)
		out.add(r.info, res, reconnects)
		if res.OK || n >= pol.Attempts || ctx.Err() != nil || !pol.On[res.Err.Type] {
			return res
		}
		if res.Chunks > 0 && !pol.AfterOutput {
			return res // never duplicate a partial answer
		}
		if !sleepCtx(ctx, backoff(pol, n, res)) {
			return res
		}
	}
}

// attempt is one attempt, reopened with Last-Event-ID when a raw event stream
// breaks after some events and the client allows reconnection: the call keeps
// its clock, so the reconnection shows as one long gap.
func (r *routePlan) attempt(ctx context.Context) (*stream.Result, int) {
	call, res := r.try(ctx, nil)
	rc := r.reconnect
	reconnects := 0
	for ; reconnects < rc.Attempts && !res.OK && ctx.Err() == nil; reconnects++ {
		if t := res.Err.Type; t != stream.ErrNetwork && t != stream.ErrTimeoutIdle || call.LastEventID() == "" {
			break
		}
		wait := rc.Delay
		if hint, ok := call.RetryHint(); ok {
			wait = hint
		}
		if !sleepCtx(ctx, wait) {
			break
		}
		call, res = r.try(ctx, call)
	}
	return res, reconnects
}

// backoff is the wait before attempt n+1: the server's Retry-After when it gave
// one (and the policy respects it), else exponential backoff with jitter.
func backoff(pol config.Retry, n int, res *stream.Result) time.Duration {
	if pol.RespectRetryAfter && res.RetryAfter >= 0 {
		return res.RetryAfter
	}
	b := pol.Backoff
	d := time.Duration(float64(b.Base) * math.Pow(2, float64(n-1)))
	if b.Max > 0 && d > b.Max {
		d = b.Max
	}
	if b.Jitter > 0 {
		d += time.Duration((randFloat()*2 - 1) * b.Jitter * float64(d))
	}
	return max(d, 0)
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func randFloat() float64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return float64(uint64(b[0])|uint64(b[1])<<8|uint64(b[2])<<16|uint64(b[3])<<24|uint64(b[4]&0x1f)<<32) /
		float64(uint64(1)<<37)
}
