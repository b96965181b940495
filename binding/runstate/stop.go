package runstate

// How the test stopped, for an interrupted run's record: k6 tells an
// extension only that the test ended (the test-end event) and, through the
// execution state, whether it was interrupted; why is read from what the
// process sees itself: a SIGINT or SIGTERM (Go hands every signal to each
// listener, k6's own included; the abort k6 makes of it when this process's
// listener has not been handed it by the test's end), the interrupt error
// test.abort() ends an iteration with (kept by k6's run context, read at the
// test's end: abort_reason.go; or each VU's iteration-end event), and, in
// handleSummary's data, a failed threshold with abortOnFail.

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"reflect"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.k6.io/k6/errext"
	"go.k6.io/k6/js/modules"
	"go.k6.io/k6/lib"

	"github.com/llmstream/xk6-llmstream/binding/k6env"
	"github.com/llmstream/xk6-llmstream/internal/report"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// k6's per-VU event type for the end of an iteration (go.k6.io/k6/internal/event).
const eventIterEnd = 5

// StopState is process-wide: what the process saw of the test's stop.
type StopState struct {
	subscribe sync.Once
	noted     atomic.Bool

	mu    sync.Mutex
	exec  *lib.ExecutionState
	plans []report.ScenarioPlan
	// abortOnFail are the thresholds that stop the test when they fail, by
	// metric: their sources.
	abortOnFail map[string][]string
	signal      string
	signalAt    time.Time
	aborted     bool
	abortMsg    string
	abortAt     time.Time
	ended       bool // k6's test-end event came
	endedAt     time.Time
	interrupted bool      // k6's execution status said so at the test's end
	start       time.Time // the test's start, read at its end
	local       []func()  // unsubscribes each VU's iteration-end subscription
	abort       abortReader
	cutAt       time.Time // when the first call was cut by a cancelled run
	sigs        chan os.Signal
	sigDone     chan struct{}
}

// Init runs in every VU's init context: once, the subscription to k6's test
// start, end and exit. test.abort()'s message is read at the test's end
// from k6's run context when the VU's context leads to it; otherwise from
// the VU's own iteration ends, where it shows too.
func (s *StopState) Init(vu modules.VU) {
	ev := vu.Events()
	s.subscribe.Do(func() {
		if ev.Global == nil {
			return
		}
		id, ch := ev.Global.Subscribe(eventTestStart, eventTestEnd, eventExit)
		go func() {
			for e := range ch {
				last := s.onGlobal(int(e.Type))
				e.Done()
				if last {
					ev.Global.Unsubscribe(id)
					return
				}
			}
		}()
	})
	if ev.Local == nil || s.abort.watch(vu.Context()) {
		return // the abort's message is read at the test's end (abort_reason.go)
	}
	id, ch := ev.Local.Subscribe(eventIterEnd)
	s.mu.Lock()
	s.local = append(s.local, func() { ev.Local.Unsubscribe(id) })
	s.mu.Unlock()
	go func() {
		// k6 waits for Done before the VU's next iteration, so the VU
		// is held only while the error is read. An abort is noted before
		// Done: once the VU goes on, the test's end may come, and an
		// abort noted after it would be lost.
		for e := range ch {
			s.noteAbort(iterError(e.Data))
			e.Done()
		}
	}()
}

// noteAbort keeps the first test.abort(): the interrupt error k6 gives
// the iteration it ended.
func (s *StopState) noteAbort(err error) {
	var ie *errext.InterruptError
	if !errors.As(err, &ie) {
		return
	}
	msg, ok := abortTestMessage(ie.Reason)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.aborted || s.ended {
		return
	}
	s.aborted, s.abortAt, s.abortMsg = true, time.Now(), msg
}

// onGlobal handles one of k6's global events: signals are watched from the
// test's start, the execution state is read at its end, and everything is
// let go at the process's exit (true: the last event).
func (s *StopState) onGlobal(t int) bool {
	switch t {
	case eventTestStart:
		s.mu.Lock()
		if s.sigs == nil {
			s.sigs, s.sigDone = make(chan os.Signal, 2), make(chan struct{})
			signal.Notify(s.sigs, syscall.SIGINT, syscall.SIGTERM)
			go s.watchSignals(s.sigs, s.sigDone)
		}
		s.mu.Unlock()
	case eventTestEnd:
		s.end()
	case eventExit:
		s.mu.Lock()
		if s.sigs != nil {
			signal.Stop(s.sigs)
			close(s.sigDone)
			s.sigs = nil
		}
		local := s.local
		s.local = nil
		s.mu.Unlock()
		for _, u := range local {
			u()
		}
		return true
	}
	return false
}

func (s *StopState) watchSignals(sigs <-chan os.Signal, done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case sig := <-sigs:
			s.mu.Lock()
			s.noteSignalLocked(sig)
			s.mu.Unlock()
		}
	}
}

// noteSignalLocked keeps the first signal seen before the test's end.
func (s *StopState) noteSignalLocked(sig os.Signal) {
	if s.signal == "" && !s.ended {
		s.signal, s.signalAt = signalName(sig), time.Now()
	}
}

// drainSignalsLocked notes a signal already delivered but not yet read by
// watchSignals. Go hands a signal to k6's listener and to this one in the
// same step, and k6 ends the test on it: on a busy machine the test's end
// can reach end() before the watcher's goroutine runs, and the signal that
// stopped the test would be lost.
func (s *StopState) drainSignalsLocked() {
	for s.sigs != nil {
		select {
		case sig := <-s.sigs:
			s.noteSignalLocked(sig)
		default:
			return
		}
	}
}

func signalName(sig os.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}

// end reads, at k6's test-end event, whether the test was interrupted and
// when it started.
func (s *StopState) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	s.drainSignalsLocked()
	s.ended, s.endedAt = true, time.Now()
	if s.signal == "" {
		// k6 stopped for a signal this process's listener has not been
		// handed yet.
		if sig, ok := s.abort.signal(); ok {
			s.signal, s.signalAt = sig, s.firstSignLocked()
		}
	}
	if msg, ok := s.abort.message(); ok && !s.aborted {
		s.aborted, s.abortMsg, s.abortAt = true, msg, s.firstSignLocked()
	}
	if s.exec != nil {
		s.interrupted = s.exec.GetCurrentExecutionStatus() == lib.ExecutionStatusInterrupted
		if s.exec.HasStarted() {
			s.start = s.endedAt.Add(-s.exec.GetCurrentTestRunDuration())
		}
	}
}

// firstSignLocked is when a stop read only at the test's end (k6's abort
// reason) showed first: the first call it cut, or without one the end.
func (s *StopState) firstSignLocked() time.Time {
	if !s.cutAt.IsZero() {
		return s.cutAt
	}
	return s.endedAt
}

// NoteCut notes when the first call was cut by its run's cancellation
// (context.Canceled: a test.abort(), a signal, a threshold's abortOnFail;
// a scenario's end cuts with its deadline), the moment of a test.abort()
// read at the test's end.
func (s *StopState) NoteCut(ctx context.Context) {
	if !errors.Is(ctx.Err(), context.Canceled) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cutAt.IsZero() && !s.ended {
		s.cutAt = time.Now()
	}
}

// Note keeps, at the first call, k6's execution state (the test-end event
// carries none) and the options that say what the test planned: its
// scenarios and its thresholds with abortOnFail. Later calls cost one atomic
// load.
func (s *StopState) Note(vu modules.VU) {
	if s.noted.Load() {
		return
	}
	st := vu.State()
	if st == nil {
		return
	}
	es := lib.GetExecutionState(vu.Context())
	abortOnFail := map[string][]string{}
	for metric, ts := range st.Options.Thresholds {
		for _, t := range ts.Thresholds {
			if t != nil && t.AbortOnFail {
				abortOnFail[metric] = append(abortOnFail[metric], t.Source)
			}
		}
	}
	plans := k6env.ScenarioPlans(st.Options)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.noted.Load() {
		return
	}
	s.exec, s.plans, s.abortOnFail = es, plans, abortOnFail
	s.noted.Store(true)
}

// Interruption is how the test stopped before its planned end, nil when it
// ran to it. failed says whether a threshold (metric, source) failed, from
// handleSummary's data.
func (s *StopState) Interruption(failed func(metric, source string) bool) *runrecord.Interruption {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.interrupted && s.signal == "" && !s.aborted {
		return nil
	}
	stop := report.Stop{At: s.endedAt, Start: s.start, Signal: s.signal, Aborted: s.aborted, AbortMessage: s.abortMsg, Plans: s.plans}
	switch {
	case s.signal != "":
		stop.At = s.signalAt
	case s.aborted:
		stop.At = s.abortAt
	}
	if stop.At.IsZero() {
		stop.At = time.Now() // report() without k6's test-end event
	}
	for metric, sources := range s.abortOnFail {
		for _, src := range sources {
			if failed(metric, src) {
				stop.Thresholds = append(stop.Thresholds, metric+": "+src)
			}
		}
	}
	return stop.Interruption()
}

// iterError is the error of k6's iteration-end event data (event.IterData,
// in a package an extension cannot import), read by its field's name: the
// field is looked up once per type, as this runs at every iteration's end.
func iterError(data any) error {
	v := reflect.ValueOf(data)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil
	}
	i, ok := errorField(v.Type())
	if !ok {
		return nil
	}
	err, _ := v.Field(i).Interface().(error)
	return err
}

// iterErrorField is the index of the Error field of the type k6's
// iteration-end events carry (one type for the process's life).
type iterErrorField struct {
	t     reflect.Type
	index int
	ok    bool
}

var lastIterErrorField atomic.Pointer[iterErrorField] //nolint:gochecknoglobals // a cache of a type's field index

// errorField is the index of t's exported Error field; false without one.
func errorField(t reflect.Type) (int, bool) {
	if c := lastIterErrorField.Load(); c != nil && c.t == t {
		return c.index, c.ok
	}
	c := &iterErrorField{t: t}
	if f, found := t.FieldByName("Error"); found && f.IsExported() && len(f.Index) == 1 {
		c.index, c.ok = f.Index[0], true
	}
	lastIterErrorField.Store(c)
	return c.index, c.ok
}
