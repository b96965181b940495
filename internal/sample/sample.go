// Package sample thins a stream of values to a capped rate without bending its
// distribution: systematic sampling (every k-th value of a call, from a random
// phase) with k chosen every 200 ms from the rate offered just before. It
// knows nothing of k6; the module uses it to bound the llm_inter_token_gap
// samples a process sends.
package sample

import (
	"math"
	"math/rand/v2"
	"sync"
	"time"
)

// Sampler keeps every k-th of the values offered to it, process-wide, so the
// kept ones arrive at about rate per second whatever the offered rate. k is
// set every window from the higher offered rate of the last two windows (a
// jittery load would otherwise overshoot after every quiet window), and a
// window never keeps more than twice its share: the cap holds even when the
// load jumps. Until the first window has passed every value is kept.
type Sampler struct {
	rate float64 // kept values per second wanted

	mu          sync.Mutex
	seen        uint64 // values offered so far
	dropped     uint64 // values not kept
	k           uint64 // keep every k-th
	windowStart time.Time
	windowSeen  uint64  // seen at windowStart
	windowKept  uint64  // kept since windowStart
	lastRate    float64 // offered rate of the window before
	now         func() time.Time
}

// window is how often k follows the offered rate: short enough that a burst
// passes the cap only briefly, long enough to hold many values.
const window = 200 * time.Millisecond

// New returns a sampler that keeps about rate values per second (rate ≤ 0
// keeps every value).
func New(rate float64) *Sampler {
	return &Sampler{rate: rate, k: 1, now: time.Now}
}

// Take offers n values (one call's gaps, in order) and returns which of them
// to keep: keep(i) is true for the i-th. It is safe for concurrent use. Every
// value is kept with the same chance, 1/k, whatever its size or its place in
// the call: the kept ones are every k-th from a random phase drawn for each
// call. (Positions counted process-wide would not do: calls of one length L,
// the usual max_tokens load, whose L is a multiple of k, would have the same
// places kept in every call, say always the first gap and never the last.)
func (s *Sampler) Take(n int) (keep func(i int) bool, kept int) {
	if n <= 0 {
		return func(int) bool { return false }, 0
	}
	if s.rate <= 0 {
		return func(int) bool { return true }, n
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.adjust(now)
	k := int(s.k)         //nolint:gosec // k ≤ the offered values of a window
	phase := rand.IntN(k) //nolint:gosec // a sampling phase, not a secret
	s.seen += uint64(n)
	candidates := 0
	if phase < n {
		candidates = (n-1-phase)/k + 1
	}
	kept = candidates
	if budget := uint64(math.Ceil(2 * s.rate * window.Seconds())); s.windowKept+uint64(kept) > budget {
		kept = int(budget - min(budget, s.windowKept)) //nolint:gosec // ≤ candidates
	}
	s.windowKept += uint64(kept)
	s.dropped += uint64(n - kept)
	return func(i int) bool {
		if i < phase || (i-phase)%k != 0 {
			return false
		}
		// When the window's budget cuts the call's share, the kept ones are
		// spread over the call's candidates, not its first ones: the first
		// events of a call are not like the rest (they often arrive together,
		// gaps of zero), and keeping only them would bend the percentiles.
		j := (i - phase) / k
		return j < candidates && (j+1)*kept/candidates > j*kept/candidates
	}, kept
}

// Dropped is how many offered values were not kept.
func (s *Sampler) Dropped() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

// Seen is how many values were offered.
func (s *Sampler) Seen() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen
}

// adjust starts a new window when the last one has passed, with k from the
// offered rate.
func (s *Sampler) adjust(now time.Time) {
	if s.windowStart.IsZero() {
		s.windowStart = now
		return
	}
	el := now.Sub(s.windowStart)
	if el < window {
		return
	}
	offered := float64(s.seen-s.windowSeen) / el.Seconds()
	est := max(offered, s.lastRate)
	s.k = 1
	if est > s.rate {
		s.k = uint64(math.Ceil(est / s.rate))
	}
	s.lastRate = offered
	s.windowStart, s.windowSeen, s.windowKept = now, s.seen, 0
}
