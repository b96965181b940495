// Package sample thins a stream of values to a capped rate without bending its
// distribution: systematic sampling (every k-th value) with k chosen
// every 200 ms from the rate offered just before. It knows nothing of k6; the
// module uses it to bound the llm_inter_token_gap samples a process sends.
package sample

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Sampler keeps every k-th of the values offered to it, process-wide, so the
// kept ones arrive at about rate per second whatever the offered rate (k is
// set every window from the rate offered in the window before; until the
// first window has passed every value is kept). Which
// values are kept depends only on their position in the offered stream, never
// on their size, so quantiles of the kept values estimate those of all.
type Sampler struct {
	rate float64 // kept values per second wanted

	seen    atomic.Uint64 // values offered so far
	k       atomic.Uint64 // keep every k-th
	dropped atomic.Uint64 // values not kept

	mu          sync.Mutex
	windowStart time.Time
	windowSeen  uint64 // seen at windowStart
	now         func() time.Time
}

// New returns a sampler that keeps about rate values per second (rate ≤ 0
// keeps every value).
func New(rate float64) *Sampler {
	s := &Sampler{rate: rate, now: time.Now}
	s.k.Store(1)
	return s
}

// Take offers n values (one call's gaps, in order) and returns which of them
// to keep: keep(i) is true for the i-th. It is safe for concurrent use; a
// call's values get consecutive positions in the process-wide stream.
func (s *Sampler) Take(n int) (keep func(i int) bool, kept int) {
	if n <= 0 {
		return func(int) bool { return false }, 0
	}
	if s.rate <= 0 {
		return func(int) bool { return true }, n
	}
	s.adjust()
	k := s.k.Load()
	end := s.seen.Add(uint64(n)) // positions end-n+1 … end (1-based)
	first := end - uint64(n) + 1
	// The kept positions are the multiples of k: the first at or after first.
	next := (first + k - 1) / k * k
	if next <= end {
		kept = int((end-next)/k) + 1
	}
	s.dropped.Add(uint64(n - kept))
	return func(i int) bool { return (first+uint64(i))%k == 0 }, kept
}

// Dropped is how many offered values were not kept.
func (s *Sampler) Dropped() uint64 { return s.dropped.Load() }

// Seen is how many values were offered.
func (s *Sampler) Seen() uint64 { return s.seen.Load() }

// window is how often k follows the offered rate: short enough that a burst
// passes the cap only briefly, long enough to hold many values.
const window = 200 * time.Millisecond

// adjust sets k from the offered rate of the last window.
func (s *Sampler) adjust() {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.windowStart.IsZero() {
		s.windowStart = now
		return
	}
	el := now.Sub(s.windowStart)
	if el < window {
		return
	}
	seen := s.seen.Load()
	offered := float64(seen-s.windowSeen) / el.Seconds()
	k := uint64(1)
	if offered > s.rate {
		k = uint64(math.Ceil(offered / s.rate))
	}
	s.k.Store(k)
	s.windowStart, s.windowSeen = now, seen
}
