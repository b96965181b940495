package capacity

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// waitBriefly is how long a test lets a goroutine that must stay blocked
// try to pass: a pass would happen at once, so any short time shows it.
const waitBriefly = 20 * time.Millisecond

func tryAcquire(g *Gate, d time.Duration) bool {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return g.Acquire(ctx)
}

func TestGateHoldsTheLevel(t *testing.T) {
	g := NewGate()
	require.False(t, tryAcquire(g, waitBriefly), "a gate of size 0 lets nobody pass")
	g.Resize(2)
	require.True(t, tryAcquire(g, waitBriefly))
	require.True(t, tryAcquire(g, waitBriefly))
	require.False(t, tryAcquire(g, waitBriefly), "a third holder over a size of 2")

	passed := make(chan bool)
	go func() { passed <- tryAcquire(g, 5*time.Second) }()
	g.Release()
	require.True(t, <-passed, "a waiter passes when a slot is released")
}

func TestGateFollowsTheSize(t *testing.T) {
	g := NewGate()
	g.Resize(1)
	require.True(t, tryAcquire(g, waitBriefly))
	passed := make(chan bool)
	go func() { passed <- tryAcquire(g, 5*time.Second) }()
	g.Resize(2) // a higher level lets the waiter in at once
	require.True(t, <-passed)

	g.Resize(1) // a lower one: both keep their slots, nobody new passes
	g.Release()
	require.False(t, tryAcquire(g, waitBriefly), "one held of a size of 1")
	g.Release()
	require.True(t, tryAcquire(g, waitBriefly))
}

func TestGateWaitEndsWithItsContext(t *testing.T) {
	g := NewGate()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan bool)
	go func() { done <- g.Acquire(ctx) }()
	cancel()
	require.False(t, <-done)
}
