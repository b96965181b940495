package stream

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestIdleGraceOnlyForAStarvedProcess(t *testing.T) {
	t.Parallel()
	deadline := time.Unix(100, 0)
	// On time (or nearly): the server was silent, fail now.
	_, ok := idleGrace(deadline, deadline.Add(2*time.Millisecond), false)
	require.False(t, ok)
	// 300 ms late: this process did not run; one grace period, as long as the lateness and more.
	grace, ok := idleGrace(deadline, deadline.Add(300*time.Millisecond), false)
	require.True(t, ok)
	require.Equal(t, 350*time.Millisecond, grace)
	// Never twice in a row.
	_, ok = idleGrace(deadline, deadline.Add(300*time.Millisecond), true)
	require.False(t, ok)
}

func TestIdleTimeoutFiresWhenNothingArrives(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancelCause(context.Background())
	w := NewWatchdog(Timeouts{Idle: 30 * time.Millisecond}, cancel)
	defer w.Stop()
	start := time.Now()
	w.Bytes()
	<-ctx.Done()
	require.GreaterOrEqual(t, time.Since(start), 30*time.Millisecond)
	require.Equal(t, ErrTimeoutIdle, Classify(nil, context.Cause(ctx)))
}

func TestBytesKeepTheIdleTimerAway(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancelCause(context.Background())
	w := NewWatchdog(Timeouts{Idle: 200 * time.Millisecond}, cancel)
	for range 10 {
		w.Bytes()
		time.Sleep(20 * time.Millisecond)
	}
	w.Stop()
	require.NoError(t, ctx.Err(), "bytes every 20 ms never leave 200 ms of silence")
}

func TestTotalTimeoutIsTheWatchdogs(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancelCause(context.Background())
	w := NewWatchdog(Timeouts{Total: 30 * time.Millisecond, FirstToken: time.Hour, Idle: time.Hour}, cancel)
	defer w.Stop()
	start := time.Now()
	w.Total()
	w.Start()
	w.Bytes()
	<-ctx.Done()
	require.GreaterOrEqual(t, time.Since(start), 30*time.Millisecond)
	require.Equal(t, ErrTimeoutTotal, Classify(context.Canceled, context.Cause(ctx)))
}

func TestADisarmedDeadlineDoesNotFire(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancelCause(context.Background())
	w := NewWatchdog(Timeouts{Connect: 20 * time.Millisecond, FirstToken: 30 * time.Millisecond, Idle: 80 * time.Millisecond}, cancel)
	defer w.Stop()
	w.ConnectStart()
	w.ConnectDone(true)
	w.Start()
	w.FirstOutput()
	start := time.Now()
	w.Bytes()
	// The timer, armed for the connect deadline, fires early twice and
	// re-arms: the call fails at the idle deadline, with its cause.
	<-ctx.Done()
	require.GreaterOrEqual(t, time.Since(start), 80*time.Millisecond)
	require.Equal(t, ErrTimeoutIdle, Classify(nil, context.Cause(ctx)))
}

func TestTheEarliestPassedDeadlineWins(t *testing.T) {
	t.Parallel()
	var cause error
	w := NewWatchdog(Timeouts{FirstToken: time.Hour, Idle: time.Hour}, func(err error) { cause = err })
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	w.arm(dueIdle, now, time.Hour)
	w.due[dueFirst] = now.Add(-2 * time.Millisecond)
	w.due[dueIdle] = now.Add(-time.Millisecond)
	require.Equal(t, dueCauses[dueFirst], w.expired(now))
	require.NoError(t, cause, "expired only names the cause")
	w.stopped = true
	w.timer.Stop()
}

func TestALateIdleTimerGetsOneGrace(t *testing.T) {
	t.Parallel()
	w := NewWatchdog(Timeouts{Idle: time.Hour}, func(error) {})
	w.mu.Lock()
	defer w.mu.Unlock()
	defer func() { w.timer.Stop() }()
	now := time.Now()
	w.arm(dueIdle, now, time.Hour)
	deadline := now.Add(-300 * time.Millisecond) // fired 300 ms late: this process was not running
	w.due[dueIdle] = deadline
	require.NoError(t, w.expired(now))
	require.Equal(t, 1, w.starved)
	require.Equal(t, now.Add(350*time.Millisecond), w.due[dueIdle])
	require.Equal(t, w.due[dueIdle], w.armed, "re-armed for the grace's end")
	require.Equal(t, dueCauses[dueIdle], w.expired(now.Add(time.Second)), "never twice in a row")
}

func TestCutOffEndsADrainUnlessEnded(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancelCause(context.Background())
	w := NewWatchdog(Timeouts{}, cancel)
	w.CutOff(10 * time.Millisecond)
	w.EndCutOff()
	time.Sleep(30 * time.Millisecond)
	require.NoError(t, ctx.Err(), "an ended cut-off does not fire")
	w.CutOff(10 * time.Millisecond)
	<-ctx.Done()
	require.ErrorIs(t, context.Cause(ctx), errCutOff)
	w.Stop()
}

func TestNothingFiresAfterStop(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancelCause(context.Background())
	w := NewWatchdog(Timeouts{Total: 10 * time.Millisecond, FirstToken: 10 * time.Millisecond}, cancel)
	w.Total()
	w.Start()
	w.Stop()
	w.Bytes()
	w.CutOff(time.Millisecond)
	time.Sleep(40 * time.Millisecond)
	require.NoError(t, ctx.Err())
}

// Watchdogs borrow their timer from a pool: one that stopped never fires
// through the timer it handed back, while the next one that has it still
// fires for its own deadline, with its own cause.
func TestAWatchdogsTimerServesTheNextAfterStop(t *testing.T) {
	t.Parallel()
	for range 20 {
		var firstCause atomic.Pointer[error]
		first := NewWatchdog(Timeouts{Total: 2 * time.Millisecond}, func(err error) { firstCause.Store(&err) })
		first.Total()
		first.Stop()
		got := make(chan error, 1)
		next := NewWatchdog(Timeouts{Total: 5 * time.Millisecond}, func(err error) { got <- err })
		next.Total()
		select {
		case err := <-got:
			require.Equal(t, dueCauses[dueTotal], err)
		case <-time.After(5 * time.Second):
			t.Fatal("the next watchdog never fired")
		}
		next.Stop()
		time.Sleep(3 * time.Millisecond) // past the first one's deadline
		require.Nil(t, firstCause.Load(), "a stopped watchdog never fires")
	}
}

// The first arming is for the soonest any of the timeouts can fall: the
// deadlines an attempt arms next, all later than that, leave the timer
// where it is; a sooner one (the drain's cut-off) moves it.
func TestTheFirstArmingIsForTheShortestTimeout(t *testing.T) {
	t.Parallel()
	w := NewWatchdog(Timeouts{Connect: time.Hour, FirstToken: 2 * time.Hour, Idle: 3 * time.Hour, Total: 4 * time.Hour},
		func(error) {})
	defer w.Stop()
	armed := func() time.Time {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.armed
	}
	before := time.Now()
	w.Total()
	first := armed()
	require.False(t, first.Before(before.Add(time.Hour)), "never before the shortest timeout")
	require.True(t, first.Before(time.Now().Add(time.Hour+time.Second)), "not at the total's own deadline")
	w.Start()
	w.ConnectStart()
	w.Bytes()
	require.Equal(t, first, armed(), "the deadlines armed next leave the timer")
	w.CutOff(time.Minute)
	require.True(t, armed().Before(first), "a sooner one moves it")
}

// A call that outlasts the first arming, armed for a connect deadline that
// was disarmed, still fails at its first-token deadline, with its cause.
func TestADeadlineAfterTheFirstArmingFires(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancelCause(context.Background())
	w := NewWatchdog(Timeouts{Connect: 20 * time.Millisecond, FirstToken: 60 * time.Millisecond, Total: time.Hour}, cancel)
	defer w.Stop()
	w.Total()
	start := time.Now()
	w.Start()
	w.ConnectStart()
	w.ConnectDone(true)
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the first-token deadline never fired")
	}
	require.GreaterOrEqual(t, time.Since(start), 60*time.Millisecond)
	require.Equal(t, ErrTimeoutFirstToken, Classify(nil, context.Cause(ctx)))
}

// StartAt and BytesAt arm their deadlines from the time their caller took
// (t0, a read's return), as Start and Bytes do from now.
func TestDeadlinesFromTheCallersClock(t *testing.T) {
	t.Parallel()
	w := NewWatchdog(Timeouts{FirstToken: time.Hour, Idle: 2 * time.Hour}, func(error) {})
	defer w.Stop()
	t0 := time.Now().Add(-time.Second)
	w.StartAt(t0)
	read := t0.Add(time.Millisecond)
	w.BytesAt(read)
	w.mu.Lock()
	defer w.mu.Unlock()
	require.Equal(t, t0.Add(time.Hour), w.due[dueFirst])
	require.Equal(t, read.Add(2*time.Hour), w.due[dueIdle])
}
