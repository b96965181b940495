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
// set every window from the offered rate, averaged over about two seconds so a
// jittery load (calls ending in bursts) is sampled at its mean rate. What is
// kept is also paid for from a bucket of tokens that fills at rate per
// second and holds burstSeconds' worth: the cap holds even when the load
// jumps, and a wave of calls that end together (streams that started
// together) is sampled like any other load. A cap per 200 ms window, which
// this replaced, was spent by the first calls of a wave and left nothing for
// the rest: the kept gaps were those of the calls that ended first, the fast
// ones. Until the first window has passed every value is a candidate; the
// bucket starts with twice a window's share and fills from there.
type Sampler struct {
	rate float64 // kept values per second wanted

	mu          sync.Mutex
	seen        uint64 // values offered so far
	dropped     uint64 // values not kept
	k           uint64 // keep every k-th
	windowStart time.Time
	windowSeen  uint64  // seen at windowStart
	rateEst     float64 // the offered rate, averaged over the last windows
	tokens      float64 // what may still be kept now
	filled      time.Time
	now         func() time.Time
}

// window is how often k follows the offered rate: short enough that a burst
// passes the cap only briefly, long enough to hold many values.
const window = 200 * time.Millisecond

// keepShare is the share of rate that k aims at: the rest fills the bucket,
// so a burst the average did not see coming is paid from savings instead of
// cutting the calls that end last (which would bend the percentiles).
const keepShare = 0.8

// rateMemory is how far back the offered rate's average reaches: about the
// last two seconds count. Gaps are offered when calls end, so the offered
// rate comes in bursts; an average that fell in the pause after a slow round
// sampled that round's calls (the slow ones) more than the rest, which
// bends the kept percentiles upwards; a longer memory smooths the bursts out.
// The memory is one of time, not of windows: a window lasts until the next
// call ends, so where calls end seldom (a few long answers, or waves of calls
// that end together) a weight per window would remember many seconds, and an
// estimate thrown high by one wave would keep too few values long after.
const rateMemory = 2 * time.Second

// burstSeconds is how many seconds' worth of values the bucket holds: more
// than the time between two waves of calls that end together (answers of up
// to half a minute), so each wave finds the tokens the quiet time since the
// last one earned. At the default 500 a second that is 15 000 values, 120 KB of k6's
// memory at most, once.
const burstSeconds = 30

// New returns a sampler that keeps about rate values per second (rate ≤ 0
// keeps every value).
func New(rate float64) *Sampler {
	// The bucket starts with what one window may keep before k is known (every
	// value is a candidate then): full, it let a test's first moments, often
	// unlike the rest, outweigh everything after them.
	return &Sampler{rate: rate, k: 1, now: time.Now, tokens: 2 * rate * window.Seconds()}
}

// Take offers n values (one call's gaps, in order) and returns which of them
// to keep: keep(i) is true for the i-th. It is safe for concurrent use. Every
// value is kept with the same chance, 1/k, whatever its size or its place in
// the call: the kept ones are every k-th from a random phase drawn for each
// call. (Positions counted process-wide would not do: calls of one length L,
// the usual max_tokens load, whose L is a multiple of k, would have the same
// places kept in every call, say always the first gap and never the last.)
func (s *Sampler) Take(n int) (keep func(i int) bool, kept int) {
	k, kept := s.TakeKeep(n)
	return k.Has, kept
}

// TakeKeep is Take with which values to keep as a Keep, a value (no
// function made for each call).
func (s *Sampler) TakeKeep(n int) (Keep, int) {
	if n <= 0 {
		return KeepNone(), 0
	}
	if s.rate <= 0 {
		return KeepAll(), n
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.adjust(now)
	k := int(s.k)         // #nosec G115 -- k ≤ the offered values of a window
	phase := rand.IntN(k) // #nosec G404 -- a sampling phase, not a secret
	s.seen += uint64(n)
	candidates := 0
	if phase < n {
		candidates = (n-1-phase)/k + 1
	}
	s.fill(now)
	kept := max(0, min(candidates, int(s.tokens)))
	s.tokens -= float64(kept)
	s.dropped += uint64(n - kept) // #nosec G115 -- kept ≤ candidates ≤ n
	return Keep{set: true, phase: phase, k: k, candidates: candidates, kept: kept}, kept
}

// Keep says which of the values offered to a Take it kept. The zero Keep
// was made by no Take (Set is false) and keeps none.
type Keep struct {
	set, all                   bool
	phase, k, candidates, kept int
}

// KeepAll keeps every value; KeepNone keeps none.
func KeepAll() Keep  { return Keep{set: true, all: true} }
func KeepNone() Keep { return Keep{set: true} }

// Set says whether a Take (or KeepAll, KeepNone) made k.
func (k Keep) Set() bool { return k.set }

// Has says whether the i-th value is kept.
func (k Keep) Has(i int) bool {
	switch {
	case k.all:
		return true
	case k.k <= 0 || i < k.phase || (i-k.phase)%k.k != 0:
		return false
	}
	// When the bucket cuts the call's share, the kept ones are
	// spread over the call's candidates, not its first ones: the first
	// events of a call are not like the rest (they often arrive together,
	// gaps of zero), and keeping only them would bend the percentiles.
	j := (i - k.phase) / k.k
	return j < k.candidates && (j+1)*k.kept/k.candidates > j*k.kept/k.candidates
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
	if s.rateEst == 0 {
		s.rateEst = offered
	} else {
		w := 1 - math.Exp(-el.Seconds()/rateMemory.Seconds()) // a 200 ms window weighs about 0.1
		s.rateEst = w*offered + (1-w)*s.rateEst
	}
	s.k = 1
	if target := keepShare * s.rate; s.rateEst > target {
		s.k = uint64(math.Ceil(s.rateEst / target))
	}
	s.windowStart, s.windowSeen = now, s.seen
}

// fill adds the tokens earned since the last fill, up to the bucket's size.
// now was read before the lock was taken, so a Take that waited for it may
// bring a time before the last fill's: it earns nothing, and takes nothing
// back (that drove the bucket below zero, and a call's kept count with it).
func (s *Sampler) fill(now time.Time) {
	if s.filled.IsZero() {
		s.filled = now
		return
	}
	if d := now.Sub(s.filled); d > 0 {
		s.tokens = min(s.rate*burstSeconds, s.tokens+s.rate*d.Seconds())
		s.filled = now
	}
}
