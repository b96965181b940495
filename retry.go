package llmstream

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"math"
	"time"

	"go.k6.io/k6/lib"

	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// execute runs the call (with its retries), then the fallback when the primary
// failed in a way the client routes, pushes the samples, and returns the outcome.
func (c *Client) execute(ctx context.Context, st *lib.State, plan, fb *callPlan) *outcome {
	defer plan.close()
	defer fb.close() // an unused fallback's event queue must still be released
	out := c.withRetries(ctx, st, plan)
	if !out.res.OK && fb != nil && c.opts.FallbackOn[out.res.Err.Type] && ctx.Err() == nil {
		out = c.fallback.withRetries(ctx, st, fb)
	}
	return out
}

// withRetries runs attempts until one succeeds or the policy says stop. Only
// the final attempt's samples are pushed, so llm_requests counts each call once.
func (c *Client) withRetries(ctx context.Context, st *lib.State, plan *callPlan) *outcome {
	pol := c.opts.Retry
	idem := ""
	if pol.IdempotencyKey != "" && plan.header.Get(pol.IdempotencyKey) == "" {
		idem = newKey()
		plan.header.Set(pol.IdempotencyKey, idem)
	}
	// The load a call met is the load when it started: read both counts now.
	active, vus := int(c.mi.root.active.Add(1)), c.activeVUs()
	defer c.mi.root.active.Add(-1)
	var (
		a       *attempt
		retries int
	)
	for n := 1; ; n++ {
		a = c.attemptResuming(ctx, st, plan)
		if a.res.OK || n >= pol.Attempts || ctx.Err() != nil || !pol.On[a.res.Err.Type] {
			break
		}
		if a.res.Chunks > 0 && !pol.AfterOutput {
			break // never duplicate a partial answer
		}
		if !sleepCtx(ctx, c.backoff(n, a)) {
			break
		}
		retries++
	}
	out := &outcome{
		res: a.res, status: a.status, retries: retries, reconnects: a.reconnects, connect: a.connect,
		servedBy: c.name(), plan: plan,
	}
	if out.res.Err != nil { // redacted once here: the result, errors and the report all read it
		out.res.Err.Message = c.redact(out.res.Err.Message)
	}
	if ctx.Err() == nil { // a call cut short by the end of the test is not a data point
		c.emit(ctx, st, out, retries+1)
		c.observe(out, active, vus)
	}
	return out
}

// backoff is the wait before attempt n+1: the server's Retry-After when it gave
// one (and the policy respects it), else exponential backoff with jitter.
func (c *Client) backoff(n int, a *attempt) time.Duration {
	b := c.opts.Retry.Backoff
	if c.opts.Retry.RespectRetryAfter && a.header != nil {
		if d, ok := retryAfter(a.header); ok {
			return d
		}
	}
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

func newKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func randFloat() float64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return float64(uint64(b[0])|uint64(b[1])<<8|uint64(b[2])<<16|uint64(b[3])<<24|uint64(b[4]&0x1f)<<32) /
		float64(uint64(1)<<37)
}

// attemptResuming is one attempt, reopened with Last-Event-ID when a raw event
// stream breaks after some events and the client allows reconnection (§3.1).
func (c *Client) attemptResuming(ctx context.Context, st *lib.State, plan *callPlan) *attempt {
	a := c.attempt(ctx, st, plan, nil)
	rc := c.opts.Reconnect
	for n := 0; n < rc.Attempts && !a.res.OK && ctx.Err() == nil; n++ {
		if t := a.res.Err.Type; t != stream.ErrNetwork && t != stream.ErrTimeoutIdle || a.call.LastEventID() == "" {
			break
		}
		wait := rc.Delay
		if hint, ok := a.call.RetryHint(); ok {
			wait = hint
		}
		if !sleepCtx(ctx, wait) {
			break
		}
		resumed := a.call
		resumed.Reopen()
		reconnects := a.reconnects + 1
		a = c.attempt(ctx, st, plan, resumed)
		a.reconnects = reconnects
	}
	return a
}
