package sim

import (
	"sort"
	"sync"
	"time"
)

// Clock is the engine's time source. The real one sleeps; FakeClock jumps, so
// model tests run the engine exactly, in microseconds of real time.
type Clock interface {
	Now() time.Time
	// Wait returns after d has passed on this clock (d < 0: never), or as soon
	// as wake or done can be received from (a nil channel never can). A pending
	// wake is consumed.
	Wait(d time.Duration, wake, done <-chan struct{})
}

// RealClock is the wall clock.
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// Wait sleeps on a timer.
func (RealClock) Wait(d time.Duration, wake, done <-chan struct{}) {
	if d == 0 {
		return
	}
	var tc <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		tc = t.C
	}
	select {
	case <-tc:
	case <-wake:
	case <-done:
	}
}

// FakeClock is a discrete-event clock for tests. Time moves only inside Wait,
// which jumps straight to the next scheduled callback or to its own deadline,
// so one engine driven by it runs deterministically and as fast as the CPU
// allows. Schedule arrivals with At; run one engine per FakeClock.
type FakeClock struct {
	mu     sync.Mutex
	now    time.Time
	events []fakeEvent
	seq    int
	kick   chan struct{}
}

type fakeEvent struct {
	at  time.Time
	seq int
	f   func()
}

// NewFakeClock starts a fake clock at start.
func NewFakeClock(start time.Time) *FakeClock {
	return &FakeClock{now: start, kick: make(chan struct{}, 1)}
}

// Now returns the fake time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// At runs f (on the goroutine that waits on the clock) when the fake time
// reaches t. Callbacks at the same instant run in the order they were added.
func (c *FakeClock) At(t time.Time, f func()) {
	c.mu.Lock()
	c.seq++
	c.events = append(c.events, fakeEvent{at: t, seq: c.seq, f: f})
	sort.Slice(c.events, func(i, j int) bool {
		if c.events[i].at.Equal(c.events[j].at) {
			return c.events[i].seq < c.events[j].seq
		}
		return c.events[i].at.Before(c.events[j].at)
	})
	c.mu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// After is At(Now()+d, f).
func (c *FakeClock) After(d time.Duration, f func()) { c.At(c.Now().Add(d), f) }

// Wait advances the fake time: it runs the callbacks due before the deadline,
// returns early when woken, and otherwise jumps to the deadline. With no
// deadline and nothing scheduled it blocks until woken or kicked by At.
func (c *FakeClock) Wait(d time.Duration, wake, done <-chan struct{}) {
	for {
		// Everything due at this instant runs before the waiter looks at its
		// wake-up, so simultaneous arrivals are all seen by the next step.
		c.mu.Lock()
		if len(c.events) > 0 && !c.events[0].at.After(c.now) {
			ev := c.events[0]
			c.events = c.events[1:]
			c.mu.Unlock()
			ev.f()
			continue
		}
		c.mu.Unlock()
		if wake != nil {
			select {
			case <-wake:
				return
			default:
			}
		}
		select {
		case <-done:
			return
		default:
		}
		c.mu.Lock()
		if len(c.events) > 0 && (d < 0 || c.events[0].at.Sub(c.now) <= d) {
			if d >= 0 {
				d -= c.events[0].at.Sub(c.now)
			}
			c.now = c.events[0].at // runs at the top of the loop
			c.mu.Unlock()
			continue
		}
		if d >= 0 {
			c.now = c.now.Add(d)
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		select {
		case <-wake:
			return
		case <-done:
			return
		case <-c.kick:
		}
	}
}
