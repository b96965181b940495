package stream

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Timeouts are the split timeouts of one call. Zero disables one.
type Timeouts struct {
	Connect    time.Duration // dial + TLS, per connection attempt
	FirstToken time.Duration // t0 → first output event
	Idle       time.Duration // longest silence between two reads of the body
	Total      time.Duration // t0 → end of stream
}

// Watchdog enforces the connect, first-token and idle timeouts by cancelling the
// call's context with a cause that Classify turns into the right error type.
// (The total timeout is a context deadline set by the caller.)
type Watchdog struct {
	t      Timeouts
	cancel context.CancelCauseFunc

	mu           sync.Mutex
	stopped      bool
	connect      *time.Timer
	first        *time.Timer
	idle         *time.Timer
	idleDeadline time.Time
	graced       bool // the idle timer was re-armed once for a starved process
	starved      int
	dialStart    time.Time
	connectTime  time.Duration
}

// starvationSlack is how late a timer may fire before we conclude the process
// (not the server) was starved of CPU: Go timers fire within about a
// millisecond on a healthy machine.
const starvationSlack = 50 * time.Millisecond

// idleGrace decides what a firing idle timer does. A timer that fires far past
// its deadline means this process did not run for that long, so the reader
// goroutine may not have read bytes that did arrive in time: give it one short
// grace period (as long as the lateness, and at least the slack) before the
// call fails. ok is false when the call should fail now.
func idleGrace(deadline, now time.Time, graced bool) (time.Duration, bool) {
	late := now.Sub(deadline)
	if graced || late <= starvationSlack {
		return 0, false
	}
	return late + starvationSlack, true
}

// NewWatchdog returns a watchdog that cancels through cancel.
func NewWatchdog(t Timeouts, cancel context.CancelCauseFunc) *Watchdog {
	return &Watchdog{t: t, cancel: cancel}
}

func (w *Watchdog) fire(t ErrorType) func() {
	return func() { w.cancel(CauseFor(t)) }
}

// Start arms the first-token timer; call it at t0.
func (w *Watchdog) Start() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.t.FirstToken > 0 && !w.stopped {
		w.first = time.AfterFunc(w.t.FirstToken, w.fire(ErrTimeoutFirstToken))
	}
}

// ConnectStart arms the connect timer when the transport looks for a
// connection (a new one may be dialled).
func (w *Watchdog) ConnectStart() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.dialStart = time.Now()
	if w.t.Connect > 0 && !w.stopped && w.connect == nil {
		w.connect = time.AfterFunc(w.t.Connect, w.fire(ErrTimeoutConnect))
	}
}

// ConnectDone disarms the connect timer once the connection is usable, and
// counts the set-up time when it was a new connection.
func (w *Watchdog) ConnectDone(reused bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !reused && !w.dialStart.IsZero() {
		w.connectTime += time.Since(w.dialStart)
	}
	if w.connect != nil {
		w.connect.Stop()
		w.connect = nil
	}
}

// Bytes is called whenever body bytes arrive (and once at the response headers):
// it re-arms the idle timer.
func (w *Watchdog) Bytes() {
	if w.t.Idle <= 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	w.idleDeadline, w.graced = time.Now().Add(w.t.Idle), false
	if w.idle == nil {
		w.idle = time.AfterFunc(w.t.Idle, w.idleFired)
		return
	}
	w.idle.Reset(w.t.Idle)
}

func (w *Watchdog) idleFired() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	if grace, ok := idleGrace(w.idleDeadline, time.Now(), w.graced); ok {
		w.graced = true
		w.starved++
		w.idle.Reset(grace)
		return
	}
	w.cancel(CauseFor(ErrTimeoutIdle))
}

// Starved counts the idle timers that fired so late that the process, not the
// server, was the one not running (each got one grace period).
func (w *Watchdog) Starved() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.starved
}

// Connect is the time spent setting up new connections (dial, TLS).
func (w *Watchdog) Connect() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.connectTime
}

// errCutOff ends a read that outlived its bound after the call was complete.
var errCutOff = errors.New("stream: read cut off after the end of the call")

// CutOff aborts the request d from now unless the returned stop is called
// first: it bounds the drain of a body after the end of the stream.
func (w *Watchdog) CutOff(d time.Duration) (stop func()) {
	t := time.AfterFunc(d, func() { w.cancel(errCutOff) })
	return func() { t.Stop() }
}

// FirstOutput disarms the first-token timer.
func (w *Watchdog) FirstOutput() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.first != nil {
		w.first.Stop()
		w.first = nil
	}
}

// Stop disarms everything; the watchdog never fires after Stop returns.
func (w *Watchdog) Stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	for _, t := range []*time.Timer{w.connect, w.first, w.idle} {
		if t != nil {
			t.Stop()
		}
	}
}
