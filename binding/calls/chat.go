package calls

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/grafana/sobek"
	"go.k6.io/k6/lib"

	"github.com/llmstream/xk6-llmstream/binding/load"
	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/schedule"
)

// chat(): it prepares the call's plan (plan.go) on the event loop, runs it
// off the loop (internal/policy, through attempt.go) on a reused goroutine
// (workers.go) and fans the outcome out (fanout.go).

// Chat starts a streamed call and returns a Promise of its result. It never
// rejects for a failed call (the result says ok: false) unless k6's throw option is set.
func (c *Client) Chat(body sobek.Value, params sobek.Value) (*sobek.Promise, error) {
	vu := c.env.VU
	st := vu.State()
	if st == nil {
		return nil, errors.New("chat() can only be called in the VU context (default function, scenarios, setup), not in init")
	}
	plan, err := c.plan(st, body, params)
	if err != nil {
		return nil, err
	}
	rt := vu.Runtime()
	p, resolve, reject := rt.NewPromise()
	due, from := c.env.Due.TakeFrom() // the first call after Schedule.next() is the credit's send
	c.launchCall(&launched{c: c, st: st, plan: plan, due: due, from: from,
		settle: vu.RegisterCallback(), rt: rt, resolve: resolve, reject: reject})
	return p, nil
}

// launched is a call on its way: what it needs to run off the event loop
// and what it hands its outcome and record to when done, a conversation's
// done, or else a chat() promise's settle. One allocation for what were a
// closure to run it and two to settle a chat() promise.
type launched struct {
	c    *Client
	st   *lib.State
	plan *callPlan
	due  time.Time          // when a schedule wanted it sent (zero: none did)
	from *schedule.Schedule // the schedule whose credit it took (nil: none)
	ctx  context.Context
	done func(*outcome, *record.Call)
	// chat(): the promise's settle, resolve and reject, and what they
	// settle it with, on the event loop (settleChat).
	settle          func(func() error)
	rt              *sobek.Runtime
	resolve, reject func(any) error
	out             *outcome
	rec             *record.Call
}

// launch runs a prepared call off the event loop, on a reused goroutine,
// and hands done (in that goroutine) its outcome and record.
// due is when a schedule wanted it sent (zero: none did).
func (c *Client) launch(st *lib.State, plan *callPlan, due time.Time, from *schedule.Schedule,
	done func(*outcome, *record.Call)) {
	c.launchCall(&launched{c: c, st: st, plan: plan, due: due, from: from, done: done})
}

// launchCall is launch of a call made ready.
func (c *Client) launchCall(l *launched) {
	l.ctx = c.env.VU.Context()
	c.noteCallStart(l.st)
	c.env.Workers.runTask(l)
	// The script's next statements can wait; the request cannot without
	// growing its TTFT. Yield so the call's goroutine takes t0, gets its
	// connection and hands the request to the writer before the VU's
	// JavaScript runs on (and, in a wave, before the calls it starts next).
	runtime.Gosched()
}

// noteCallStart tells what watches the VU's calls that one starts (chat,
// a conversation's turn, embed, rerank): the report's load and stop
// watch, the server-metrics scraper, and the module's transports, which
// close the last iteration's idle connections when the VU may not reuse them.
func (c *Client) noteCallStart(st *lib.State) {
	c.env.Sinks.Report.Info.NoteLoad(c.env.Scope)
	c.env.Sinks.Report.Stop.Note(c.env.VU)
	c.env.Server.NoteCall(st)
	c.env.Transports.NewIteration(st)
}

// run is the call, on a worker goroutine.
func (l *launched) run() {
	c, st, ctx := l.c, l.st, l.ctx
	defer l.plan.close()
	// The load a call met is the load when it started: read both counts now.
	ld := callLoad{active: int(c.env.Active.Add(1)), vus: c.activeVUs(), due: l.due}
	c.env.Lag.Acquire()
	start := time.Now()
	out := l.plan.run(ctx)
	if lag, ok := c.env.Lag.Since(start); ok {
		out.ClientLag = measure.Of(lag)
	}
	c.env.Lag.Release()
	c.env.Active.Add(-1)
	c.env.Sinks.LagWarning.Check(st.Logger, out.ClientLag.Or(0))
	c.env.Sinks.LagWarning.NoteTTFT(st.Logger, out.TTFTCheck())
	// The call's times are taken; what is left (samples, report, the JS
	// result) can wait. When many calls end together, the requests that
	// follow them are waiting for a CPU too, queued behind these
	// fan-outs: a request is written by its connection's own goroutine,
	// and while it waits its TTFT grows (Result.SendWait). Yielding here
	// lets them go first.
	runtime.Gosched()
	rec := fanOut(ctx, out, st.Samples, c.env.Sinks, ld)
	load.AfterScheduledCall(ctx, l.from, c.env.Sinks.Metrics, st)
	if l.done != nil {
		l.done(out, rec)
		return
	}
	l.out, l.rec = out, rec
	l.settle(l.settleChat)
}

// settleChat settles a chat() promise with the call's result, on the
// event loop. It never rejects for a failed call (the result says ok:
// false) unless k6's throw option is set.
func (l *launched) settleChat() error {
	if l.st.Options.Throw.Bool && !l.out.OK() {
		return l.reject(fmt.Errorf("llmstream: %s", l.out.Final().Result.Err))
	}
	return l.resolve(jsResult(l.rt, l.rec)) // result.go: read from the record on access
}
