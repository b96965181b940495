package stream

import (
	"context"
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
