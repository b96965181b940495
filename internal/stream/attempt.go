package stream

// One HTTP attempt, from the request to its result, as one object: the
// attempt's context (its timeouts, its trace hooks, its set-up timer), the
// tap its transport goes through, and the body reader that hands the
// response to the call. Attempt.Run makes every call of the Call and the
// Watchdog in the order they need, around a Send the caller gives it, so an
// HTTP client (k6's, or net/http's in tests) only sends the request and
// drains the body.

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// Attempt is one HTTP attempt of a call.
type Attempt struct {
	Config   Config // without a watchdog: each attempt has its own
	Timeouts Timeouts
	// Resume is the call of a raw event stream that broke, reopened with
	// Last-Event-ID: it keeps its clock. nil for a fresh attempt.
	Resume *Call
	// ArrivalClock finds the receive stamps under the connection a request
	// got (nil: none). Unset, a connection that is itself an ArrivalClock
	// is used as one.
	ArrivalClock func(net.Conn) ArrivalClock
	// DumpRequest and DumpResponse, when set, see every request the tap
	// sends and every response it gets (a debug log).
	DumpRequest  func(*http.Request)
	DumpResponse func(*http.Response)
	// ResponseHeaders, when set, sees every response's headers (a live
	// conversation keeps a router's session token from them).
	ResponseHeaders func(http.Header)
}

// Send sends the attempt's request and reads its response body to the end,
// as an HTTP client does. The request must carry ctx (the attempt's
// timeouts and hooks) and go through tap.Transport. A *Error it returns
// fails the attempt as it is (a request that could not be made); any other
// error is classified by the attempt's context.
type Send func(ctx context.Context, tap *Tap) error

// Tap is the attempt's side of the request, for a Send. It holds the
// attempt's watchdog and its transport wrapper itself, and a fresh
// attempt's tap is made with its call (freshAttempt): one allocation for
// them all, made for every attempt.
type Tap struct {
	call *Call
	// attempt is what the tap keeps of the Attempt whose Run made it, so
	// the caller's need not outlive the call; watchdog is the attempt's;
	// rt is the tap over the transport the attempt's request went through
	// (Transport).
	attempt  tapAttempt
	watchdog Watchdog
	rt       tapTransport
	body     tapBody // the first response's body the tap reads (RoundTrip)
	ctx      attemptCtx
	// hooks are the attempt's trace hooks (hooks.go), made with the tap;
	// last is the chain the latest request got (traced).
	hooks hookChain
	last  *hookChain
	// The TLS handshake's start, as a monotonic offset from sentBase (+1: 0
	// is "not started"), so a wall-clock step mid-handshake is not in it.
	tlsStart atomic.Int64
}

// LastEventID is the Last-Event-ID header a resumed attempt's request must
// carry ("" for a fresh attempt).
func (t *Tap) LastEventID() string {
	if t.attempt.resume == nil {
		return ""
	}
	return t.attempt.resume.LastEventID()
}

// Transport is base with the attempt's tap: t0 when the request is handed
// over, the response to the call when its headers arrive, and the body read
// by the call on the client's first Read.
func (t *Tap) Transport(base http.RoundTripper) http.RoundTripper {
	if t.rt.tap == nil { // the attempt's request
		t.rt = tapTransport{base: base, tap: t}
		return &t.rt
	}
	return &tapTransport{base: base, tap: t} // the first may be in use
}

// Run runs the attempt: the call (new, or the resumed one reopened), its
// watchdog (with the total timeout), the trace hooks, then send, then the call's
// classification and figures. It returns the call (to resume, if its stream
// broke) and its result.
func (a *Attempt) Run(parent context.Context, send Send) (*Call, *Result) {
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	var tap *Tap
	call := a.Resume
	if call == nil {
		fresh := new(freshAttempt)
		tap, call = &fresh.tap, &fresh.call
	} else {
		tap = new(Tap)
	}
	// The tap keeps what it needs of a from here on: a need not outlive the call.
	tap.attempt = tapAttempt{resume: a.Resume, arrivalClock: a.ArrivalClock, dumpRequest: a.DumpRequest,
		dumpResponse: a.DumpResponse, responseHeaders: a.ResponseHeaders}
	// The total timeout is the watchdog's, as the others are: a deadline of
	// the context would be one more context and timer per attempt.
	wd := &tap.watchdog
	wd.Init(a.Timeouts, cancel)
	defer wd.Stop()
	total := wd.Total()
	if a.Resume == nil {
		cfg := a.Config
		cfg.Watchdog = wd
		call.init(cfg, time.Time{}) // t0 is set when the tap gets the request
	} else {
		call.Reopen()
		call.SetWatchdog(wd)
	}
	tap.call = call
	tap.hooks.bind(tap)
	tap.ctx = attemptCtx{Context: ctx, timer: call}
	if !total.IsZero() {
		tap.ctx.deadline = total.Add(TotalMargin)
	}
	err := send(&tap.ctx, tap)
	if se, ok := err.(*Error); ok { //nolint:errorlint // Send's own, unwrapped, by contract
		call.Fail(se.Type, se.Message)
	} else if err != nil {
		cause := context.Cause(ctx)
		if parent.Err() != nil {
			cause = parent.Err()
		}
		msg := err.Error()
		if IsTLS(err) {
			msg = "TLS: " + msg
		}
		call.Fail(Classify(err, cause), msg)
	}
	return call, call.Finish()
}

// freshAttempt is a fresh attempt's tap and call, in one allocation:
// each holds the other (the call its tap's watchdog, the tap its call),
// and a request's hooks and body, which may still run after the attempt,
// hold the tap, so neither is ever freed before the other. The pair fits
// the allocator's 2048-byte size class, the two apart took 768 and 1408
// bytes; a resumed attempt's tap is made alone, for the call it reopens.
type freshAttempt struct {
	tap  Tap
	call Call
}

// tapAttempt is what a tap keeps of its Attempt: the call it resumes and
// the callbacks of its requests, not the config and timeouts its call and
// watchdog hold copies of.
type tapAttempt struct {
	resume          *Call
	arrivalClock    func(net.Conn) ArrivalClock
	dumpRequest     func(*http.Request)
	dumpResponse    func(*http.Response)
	responseHeaders func(http.Header)
}

func (a *tapAttempt) clockOf(c net.Conn) ArrivalClock {
	if a.arrivalClock != nil {
		return a.arrivalClock(c)
	}
	if ac, ok := c.(ArrivalClock); ok {
		return ac
	}
	return nil
}

// setUpTimerKey holds, in a request's context, what its dial reports its
// own duration to (WithSetUpTimer).
type setUpTimerKey struct{}

// SetUpTimer takes the time a dial or TLS handshake took itself (Call.SetUp).
type SetUpTimer interface{ SetUp(d time.Duration) }

// SetUpFunc is a function as a SetUpTimer.
type SetUpFunc func(time.Duration)

// SetUp calls f.
func (f SetUpFunc) SetUp(d time.Duration) { f(d) }

// WithSetUpTimer has the transport's dial for a request (ReportSetUp) report
// how long it took itself (resolving and connecting) to timer: the dial
// runs on Go's own dialing goroutine, whose waits for a CPU the request's
// connect also holds.
func WithSetUpTimer(ctx context.Context, timer SetUpTimer) context.Context {
	return context.WithValue(ctx, setUpTimerKey{}, timer)
}

// attemptCtx is an attempt's context with its call as the set-up timer,
// as WithSetUpTimer makes it, held in the tap: a context of its own was an
// allocation of every attempt. Its deadline is the total timeout's plus
// TotalMargin (zero: none of its own).
type attemptCtx struct {
	context.Context
	timer    SetUpTimer
	deadline time.Time
}

// TotalMargin is how long after an attempt's total timeout a client's own
// bound on the request falls (k6's request timeout): the watchdog ends the
// attempt first, with a cause that classifies it, and the bound is only a
// backstop.
const TotalMargin = time.Second

// Deadline is the total timeout's plus TotalMargin, or the parent's when
// that is sooner: the watchdog cancels the attempt before it. A client
// that bounds its request by the total plus the margin, counted from a
// later moment (k6's MakeRequest: context.WithTimeout), then derives a
// plain cancelable context from the attempt's instead of one with a timer
// of its own, a timer started and stopped at every attempt for a bound the
// attempt's context already sets.
func (c *attemptCtx) Deadline() (time.Time, bool) {
	d, ok := c.Context.Deadline()
	if c.deadline.IsZero() || (ok && d.Before(c.deadline)) {
		return d, ok
	}
	return c.deadline, true
}

func (c *attemptCtx) Value(key any) any {
	if _, ok := key.(setUpTimerKey); ok {
		return c.timer
	}
	return c.Context.Value(key)
}

// ReportSetUp is how a dial reports its own time to the request it dials
// for, when the request's context has a set-up timer.
func ReportSetUp(ctx context.Context, d time.Duration) {
	if timer, ok := ctx.Value(setUpTimerKey{}).(SetUpTimer); ok {
		timer.SetUp(d)
	}
}

// tapTransport sits under the HTTP client's own transport chain (k6's
// tracing transport): the client still measures what it measures, while the
// body is read and timed by the call.
type tapTransport struct {
	base http.RoundTripper
	tap  *Tap
}

func (t *tapTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	call, a := t.tap.call, &t.tap.attempt
	if call.Start.IsZero() {
		now := time.Now()
		call.Begin(now) // t0: handed to the transport
		t.tap.watchdog.StartAt(now)
	}
	if a.dumpRequest != nil {
		a.dumpRequest(r)
	}
	resp, err := t.base.RoundTrip(t.tap.traced(r))
	if err != nil {
		return nil, err
	}
	call.Respond(resp, time.Now())
	if a.dumpResponse != nil {
		a.dumpResponse(resp)
	}
	if a.responseHeaders != nil {
		a.responseHeaders(resp.Header)
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.Header.Get("Location") != "" {
		return resp, nil // the client follows the redirect; the final response is read
	}
	b := &t.tap.body
	if b.call != nil { // a response after the first (an authentication's retry): its own
		b = new(tapBody)
	}
	*b = tapBody{call: call, body: resp.Body}
	resp.Body = b
	return resp, nil
}

// tapBody reads the whole stream on the client's first Read: the parse runs
// in the goroutine that reads the socket, so arrival times are taken as
// bytes land.
type tapBody struct {
	call *Call
	body io.ReadCloser
	done bool
	err  error
}

func (b *tapBody) Read([]byte) (int, error) {
	if !b.done {
		b.done = true
		b.err = b.call.Read(b.body)
	}
	if b.err != nil {
		return 0, b.err
	}
	return 0, io.EOF
}

// WriteTo is the same read for io.Copy, which k6 drains the body with: with
// it, io.Copy hands the body over instead of lending an 8 KiB buffer that
// would be held for the whole life of the stream.
func (b *tapBody) WriteTo(io.Writer) (int64, error) {
	if _, err := b.Read(nil); err != io.EOF { //nolint:errorlint // Read returns io.EOF itself
		return 0, err
	}
	return 0, nil
}

func (b *tapBody) Close() error { return b.body.Close() }
