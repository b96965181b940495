package stream

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Timeouts are the split timeouts of one call. Zero disables one.
type Timeouts struct {
	Connect    time.Duration // dial + TLS, per connection attempt
	FirstToken time.Duration // t0 → first output event
	Idle       time.Duration // longest silence between two reads of the body
	Total      time.Duration // t0 → end of stream
}

// soonest is the shortest of the timeouts, 0 when none is set.
func (t Timeouts) soonest() time.Duration {
	var s time.Duration
	for _, d := range [...]time.Duration{t.Connect, t.FirstToken, t.Idle, t.Total} {
		if d > 0 && (s == 0 || d < s) {
			s = d
		}
	}
	return s
}

// Watchdog enforces the split timeouts by cancelling the call's context with
// a cause that Classify turns into the right error type: connect, first
// token and idle, the total when armed (Total), and the bound of the drain
// after the end (CutOff).
//
// All of them share one timer, armed for the earliest deadline. A deadline
// that moves later (idle, at every read) or is disarmed leaves the timer
// where it is: when it fires early it only re-arms for what is due next. A
// call is thus one timer, made once, instead of one per timeout plus a reset
// per read of the body: at thousands of short calls a second each of those
// was a timer insertion and deletion on the runtime's heap. The timer is
// first armed for the soonest any of the timeouts can fall (arm), so the
// deadlines an attempt arms next, microseconds later, leave it there too.
type Watchdog struct {
	t      Timeouts
	cancel context.CancelCauseFunc

	mu      sync.Mutex
	stopped bool
	graced  bool           // the idle deadline was moved once for a starved process (beside stopped: one word)
	timer   *time.Timer    // lent's, once armed
	armed   time.Time      // when the timer fires; zero: not armed
	lent    *watchdogTimer // the pooled timer, until Stop hands it back
	due     [deadlines]time.Time
	starved int
	// dialStart is when the transport began to look for a connection.
	dialStart   time.Time
	connectTime time.Duration
}

// A watchdog's deadlines, each with its cause.
const (
	dueConnect = iota
	dueFirst
	dueIdle
	dueTotal
	dueCutOff
	deadlines
)

// dueCauses are the causes the deadlines cancel with: made once, as a
// cause made at each firing would be an allocation per call.
var dueCauses = [deadlines]error{ //nolint:gochecknoglobals // read-only table
	dueConnect: CauseFor(ErrTimeoutConnect),
	dueFirst:   CauseFor(ErrTimeoutFirstToken),
	dueIdle:    CauseFor(ErrTimeoutIdle),
	dueTotal:   CauseFor(ErrTimeoutTotal),
	dueCutOff:  errCutOff,
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

// Init readies a zero Watchdog that its caller holds, as NewWatchdog makes
// one: an attempt that holds its watchdog makes one allocation fewer.
func (w *Watchdog) Init(t Timeouts, cancel context.CancelCauseFunc) {
	w.t, w.cancel = t, cancel
}

// arm sets deadline k d from now (d > 0); mu is held.
func (w *Watchdog) arm(k int, now time.Time, d time.Duration) {
	if w.stopped {
		return
	}
	at := now.Add(d)
	w.due[k] = at
	if !w.armed.IsZero() && !at.Before(w.armed) {
		return // the timer fires first and re-arms for it then
	}
	w.armed = at
	if w.timer == nil {
		// The first arming (an attempt's total, from its start) is for the
		// shortest of the timeouts from now when that is sooner: every
		// deadline of a timeout falls no sooner than that, so the ones
		// armed next (the first token's from t0, the connect's when the
		// transport looks for a connection) leave the timer where it is,
		// where each was a reset of it at every call. A call that outlasts
		// it gets the early firing that re-arms for what is due, as a
		// disarmed connect deadline gave it anyway.
		if s := w.t.soonest(); s > 0 && s < d {
			w.armed, d = now.Add(s), s
		}
		wt := watchdogTimers.Get().(*watchdogTimer) //nolint:forcetypeassert // the pool holds nothing else
		wt.w.Store(w)
		w.lent, w.timer = wt, wt.t
	}
	w.timer.Reset(d)
}

// watchdogTimer is a timer watchdogs borrow, one at a time: a timer made
// for each attempt (and the function it calls) were two allocations and a
// timer created and dropped by every call. It calls the watchdog that has
// it. A firing that began before its last watchdog stopped may reach the
// next one: that one only checks its own deadlines then, and re-arms the
// timer for the first that is still to come, as at any early firing.
type watchdogTimer struct {
	t *time.Timer
	w atomic.Pointer[Watchdog]
}

// watchdogTimers are the stopped timers watchdogs borrow.
var watchdogTimers = sync.Pool{New: func() any { //nolint:gochecknoglobals // a pool shared by every attempt is the point
	wt := &watchdogTimer{}
	wt.t = time.AfterFunc(time.Hour, wt.fire)
	wt.t.Stop()
	return wt
}}

func (wt *watchdogTimer) fire() {
	if w := wt.w.Load(); w != nil {
		w.fired()
	}
}

// fired cancels with the cause of the earliest deadline that passed, or
// re-arms the timer for the earliest one still to come. It cancels with mu
// held: once Stop returned, nothing is cancelled.
func (w *Watchdog) fired() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if cause := w.expired(time.Now()); cause != nil {
		w.cancel(cause)
	}
}

// expired is the cause to cancel with at now, nil when none is due yet (the
// timer is then re-armed); mu is held.
func (w *Watchdog) expired(now time.Time) error {
	w.armed = time.Time{}
	if w.stopped {
		return nil
	}
	if idle := w.due[dueIdle]; !idle.IsZero() && !idle.After(now) {
		if grace, ok := idleGrace(idle, now, w.graced); ok {
			w.graced = true
			w.starved++
			w.due[dueIdle] = now.Add(grace)
		}
	}
	first, next := -1, time.Time{}
	for k, at := range w.due {
		switch {
		case at.IsZero():
		case !at.After(now):
			if first < 0 || at.Before(w.due[first]) {
				first = k
			}
		case next.IsZero() || at.Before(next):
			next = at
		}
	}
	if first >= 0 {
		return dueCauses[first]
	}
	if !next.IsZero() {
		w.armed = next
		w.timer.Reset(next.Sub(now))
	}
	return nil
}

// Total arms the total timeout, from now: the whole attempt's bound. It
// returns the deadline it armed (zero when there is no total, or the
// watchdog stopped).
func (w *Watchdog) Total() time.Time {
	if w.t.Total <= 0 {
		return time.Time{}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.arm(dueTotal, time.Now(), w.t.Total)
	return w.due[dueTotal]
}

// Start arms the first-token timer; call it at t0.
func (w *Watchdog) Start() { w.StartAt(time.Now()) }

// StartAt is Start at t0, now, as its caller just took it.
func (w *Watchdog) StartAt(now time.Time) {
	if w.t.FirstToken <= 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.arm(dueFirst, now, w.t.FirstToken)
}

// ConnectStart arms the connect timer when the transport looks for a
// connection (a new one may be dialled).
func (w *Watchdog) ConnectStart() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.dialStart = time.Now()
	if w.t.Connect > 0 && w.due[dueConnect].IsZero() {
		w.arm(dueConnect, w.dialStart, w.t.Connect)
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
	w.due[dueConnect] = time.Time{}
}

// Bytes is called whenever body bytes arrive (and once at the response headers):
// it moves the idle deadline.
func (w *Watchdog) Bytes() { w.BytesAt(time.Now()) }

// BytesAt is Bytes for bytes that arrived now, as the reader that got
// them just took it: a clock read fewer for every read of the body.
func (w *Watchdog) BytesAt(now time.Time) {
	if w.t.Idle <= 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.graced = false
	w.arm(dueIdle, now, w.t.Idle)
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

// CutOff aborts the request d from now unless EndCutOff is called first: it
// bounds the drain of a body after the end of the stream.
func (w *Watchdog) CutOff(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.arm(dueCutOff, time.Now(), d)
}

// EndCutOff disarms CutOff.
func (w *Watchdog) EndCutOff() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.due[dueCutOff] = time.Time{}
}

// FirstOutput disarms the first-token timer.
func (w *Watchdog) FirstOutput() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.due[dueFirst] = time.Time{}
}

// Stop disarms everything; the watchdog never fires after Stop returns.
func (w *Watchdog) Stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	if w.timer != nil {
		w.timer.Stop()
	}
	if wt := w.lent; wt != nil { // never used by w again: stopped, it arms nothing
		wt.w.Store(nil)
		watchdogTimers.Put(wt)
		w.lent, w.timer = nil, nil
	}
}
