package sample

import (
	"math"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeClock advances by step at every reading.
type fakeClock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(c.step)
	return c.t
}

// onFakeClock is a sampler of rate a second reading a fake clock.
func onFakeClock(rate float64) (*Sampler, *fakeClock) {
	clk := &fakeClock{t: time.Unix(0, 0)}
	s := New(rate)
	s.now = clk.now
	return s, clk
}

func quantile(sorted []float64, q float64) float64 {
	return sorted[int(q*float64(len(sorted)-1))]
}

// A synthetic run: calls of 50–500 gaps drawn from a lognormal mixture (fast
// decode, with a slow tail), 10 000 gaps offered per simulated second, a cap
// of 500 per second. The kept gaps' quantiles match those of all gaps.
func TestSampledQuantilesMatchAll(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 11)) //nolint:gosec // a reproducible synthetic distribution
	s, clk := onFakeClock(500)
	var all, kept []float64
	for len(all) < 400_000 {
		n := 50 + rng.IntN(451)
		gaps := make([]float64, n)
		for i := range gaps {
			g := math.Exp(rng.NormFloat64()*0.4 + math.Log(20)) // ~20 ms
			if rng.Float64() < 0.02 {
				g *= 10 // a slow tail
			}
			gaps[i] = g
		}
		clk.step = time.Duration(float64(n) / 10_000 * float64(time.Second))
		keep, nk := s.Take(n)
		got := 0
		for i, g := range gaps {
			if keep(i) {
				kept = append(kept, g)
				got++
			}
		}
		require.Equal(t, nk, got, "kept count and keep() agree")
		all = append(all, gaps...)
	}
	require.Equal(t, uint64(len(all)), s.Seen())
	require.Equal(t, uint64(len(all)-len(kept)), s.Dropped())
	// 40 simulated seconds at a cap of 500/s: at most 20 000, plus the
	// bucket's start (200). k aims at 80 % of the cap (the rest is saved for
	// bursts) and is a whole number: here every 25th of 10 000/s, 400/s.
	require.LessOrEqual(t, len(kept), 20_200, "the cap holds")
	require.GreaterOrEqual(t, len(kept), 15_000, "the sampler keeps close to its aim")
	sort.Float64s(all)
	sort.Float64s(kept)
	for _, q := range []float64{0.5, 0.9, 0.99} {
		// The kept quantile's rank among all gaps: with n ≈ 19 000 kept
		// values its standard error is sqrt(q(1-q)/n) ≤ 0.0037 (0.00072 at
		// p99); 0.015 is over four of them anywhere, and the seed is fixed.
		k := quantile(kept, q)
		rank := float64(sort.SearchFloat64s(all, k)) / float64(len(all))
		require.InDelta(t, q, rank, 0.015, "p%.0f: kept %.2f ranks at %.4f among all (all's is %.2f)",
			q*100, k, rank, quantile(all, q))
	}
}

func TestUnderTheCapEverythingIsKept(t *testing.T) {
	t.Parallel()
	s := New(1_000_000)
	for range 100 {
		keep, n := s.Take(10)
		require.Equal(t, 10, n)
		for i := range 10 {
			require.True(t, keep(i))
		}
	}
	require.Zero(t, s.Dropped())
}

func TestNoCapKeepsEverything(t *testing.T) {
	t.Parallel()
	s := New(0)
	keep, n := s.Take(5)
	require.Equal(t, 5, n)
	require.True(t, keep(4))
	_, n = s.Take(0)
	require.Zero(t, n)
}

func TestConcurrentTakesAccountForEveryValue(t *testing.T) {
	t.Parallel()
	s := New(100)
	clk := &fakeClock{t: time.Unix(0, 0), step: time.Millisecond}
	s.now = clk.now
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for range 8 {
		wg.Go(func() {
			for range 500 {
				_, n := s.Take(37)
				mu.Lock()
				total += n
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.Equal(t, uint64(8*500*37), s.Seen())
	require.Equal(t, s.Seen()-uint64(total), s.Dropped())
}

// A load that jumps tenfold keeps at most what the bucket held and what it
// earns: the cap holds for the jump's first moments (k has not followed yet)
// and for its whole length.
func TestAJumpInLoadIsCapped(t *testing.T) {
	t.Parallel()
	s, clk := onFakeClock(1000)
	clk.step = 10 * time.Millisecond // 100 values per 10 ms: 10 000/s for a minute
	for range 6000 {
		s.Take(100)
	}
	clk.step = time.Millisecond // now 100 000/s, for 20 s
	kept := 0
	for range 20_000 {
		_, n := s.Take(100)
		kept += n
	}
	require.LessOrEqual(t, kept, 1000*burstSeconds+1000*20, "at most a full bucket and its refill")
	require.GreaterOrEqual(t, kept, 1000*20/2, "k follows the jump; it does not stop sampling")
}

// Calls of one length, a multiple of k (here 200 values, every 10th kept):
// every place in a call is kept equally often, not the same places every
// call (the first value of a call is often special: the first gap after the
// first token).
func TestEveryPlaceInACallIsKeptAlike(t *testing.T) {
	t.Parallel()
	s := New(1000)
	clk := &fakeClock{t: time.Unix(0, 0), step: 20 * time.Millisecond} // 200 values per 20 ms: 10 000/s
	s.now = clk.now
	const calls, n = 3000, 200
	var byPlace [n]int
	for range calls {
		keep, _ := s.Take(n)
		for i := range n {
			if keep(i) {
				byPlace[i]++
			}
		}
	}
	// k aims at 80 % of the cap: every 13th of 10 000/s. Each place is kept
	// in about calls/k of the calls (binomial: 231, standard deviation ~15),
	// and within six standard deviations of that. (Centred on calls/10, for
	// the k of a sampler that aimed at the whole cap, this failed in about
	// one run in eight.)
	require.Equal(t, uint64(13), s.k)
	p := 1 / float64(s.k)
	want, sd := calls*p, math.Sqrt(calls*p*(1-p))
	for i, c := range byPlace {
		require.InDelta(t, want, c, 6*sd, "place %d of a call kept %d times in %d calls", i, c, calls)
	}
}

// When the bucket cuts a call's share (a burst: k has not caught up
// yet), what is kept is spread over the whole call, not its first values:
// the first events of a call often arrive together (gaps of zero), and
// keeping only them bent the percentiles of a burst of calls.
func TestACutShareIsSpreadOverTheCall(t *testing.T) {
	t.Parallel()
	s, _ := onFakeClock(100)   // the bucket starts with 40: twice a 200 ms window's share
	keep, kept := s.Take(1000) // the first window: k = 1, 1 000 candidates
	require.Equal(t, 40, kept)
	var at []int
	for i := range 1000 {
		if keep(i) {
			at = append(at, i)
		}
	}
	require.Len(t, at, kept, "keep agrees with kept")
	require.Less(t, at[0], 50, "from the start of the call")
	require.Greater(t, at[len(at)-1], 950, "to its end")
	for i := 1; i < len(at); i++ {
		require.InDelta(t, 25, at[i]-at[i-1], 1, "evenly")
	}
}

// Streams that start together end together: every few seconds a wave of
// calls ends within a few milliseconds, the later ones slower. Every call of
// a wave is sampled alike, so the kept values' median is all values' median.
// (A cap per 200 ms window was spent by each wave's first calls: it kept 200
// values a wave here, and their median ranked at 0.05 among all values, the
// fast calls only.)
func TestAWaveOfCallsIsSampledAlike(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 5)) //nolint:gosec // a reproducible synthetic load
	s, clk := onFakeClock(500)
	var all, kept []float64
	for wave := range 30 {
		clk.step = 4 * time.Second // the answers stream; nothing ends
		s.now()
		clk.step = 100 * time.Microsecond
		a, k := endTogether(s, rng, 200, 10)
		if wave >= 3 { // k is learned over the first waves
			all, kept = append(all, a...), append(kept, k...)
		}
	}
	require.Greater(t, len(kept), 27*1000, "about rate × 4 s kept per wave")
	rank := medianRank(all, kept)
	require.InDelta(t, 0.5, rank, 0.03, "the kept median ranks at %.3f among all values", rank)
}

// Calls that end in bursts at irregular times (16 at once, 100–800 ms apart),
// the later ones in a burst slower: the kept median is all values' median.
// (With k from the higher rate of the last two windows and a cap per 200 ms
// window, the bursts after a quiet spell were cut after their first calls:
// the kept median ranked at 0.41.)
func TestIrregularBurstsAreSampledAlike(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2)) //nolint:gosec // a reproducible synthetic load
	s, clk := onFakeClock(500)
	var all, kept []float64
	for range 200 {
		clk.step = time.Duration(100+rng.IntN(800)) * time.Millisecond
		s.now()
		clk.step = 50 * time.Microsecond
		a, k := endTogether(s, rng, 16, 4)
		all, kept = append(all, a...), append(kept, k...)
	}
	rank := medianRank(all, kept)
	require.InDelta(t, 0.5, rank, 0.02, "the kept median ranks at %.3f among all values", rank)
}

// endTogether offers calls of 200 values that end one right after another,
// the c-th call's values in [c, c+spread): the later a call ends, the slower
// it was. It returns the values offered and those kept.
func endTogether(s *Sampler, rng *rand.Rand, calls int, spread float64) (all, kept []float64) {
	for c := range calls {
		vals := make([]float64, 200)
		for i := range vals {
			vals[i] = float64(c) + spread*rng.Float64()
		}
		keep, _ := s.Take(len(vals))
		for i, v := range vals {
			all = append(all, v)
			if keep(i) {
				kept = append(kept, v)
			}
		}
	}
	return all, kept
}

// medianRank is where the kept values' median ranks among all values (0.5
// for an unbiased sample).
func medianRank(all, kept []float64) float64 {
	sort.Float64s(all)
	sort.Float64s(kept)
	return float64(sort.SearchFloat64s(all, quantile(kept, 0.5))) / float64(len(all))
}

// Take reads the clock before it waits for the lock, so under contention a
// Take can bring an earlier time than the one before it. That must earn
// nothing and cost nothing: it once drove the bucket below zero and a call's
// kept count negative, and the k6 module's make(…, kept) panicked (1 000
// streams, uniform answers).
func TestAnEarlierClockReadingKeepsNothingBack(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(100, 0)
	times := []time.Time{t0, t0.Add(-time.Second), t0.Add(-time.Second)}
	s := New(500)
	s.now = func() time.Time {
		at := times[0]
		times = times[1:]
		return at
	}
	_, kept := s.Take(10_000) // the first window: k = 1, the bucket's 200
	require.Equal(t, 200, kept)
	for range 2 {
		keep, kept := s.Take(100) // a second earlier: nothing earned, the bucket empty
		require.Zero(t, kept)
		for i := range 100 {
			require.False(t, keep(i))
		}
	}
	require.Equal(t, uint64(10_200), s.Seen())
	require.Equal(t, uint64(10_000), s.Dropped())
}

// Waves of 16 calls that end 20 ms apart, a second between waves (a loaded
// machine's batch of calls): a window then lasts from one wave to the next,
// and the estimate of the offered rate, thrown high by a window that caught
// most of a wave in 200 ms, must come down within seconds, not waves. Kept
// per second over the run's last 15 s: about keepShare × rate.
func TestSeldomWavesKeepTheirShare(t *testing.T) {
	t.Parallel()
	const rate = 150
	s, clk := onFakeClock(rate)
	kept, from := 0, time.Time{}
	for wave := range 20 {
		if wave == 5 {
			from = clk.t
		}
		clk.step = time.Second
		s.now()
		clk.step = 20 * time.Millisecond
		for range 16 {
			_, k := s.Take(200)
			if wave >= 5 {
				kept += k
			}
		}
	}
	perSecond := float64(kept) / clk.t.Sub(from).Seconds()
	require.InDelta(t, keepShare*rate, perSecond, 0.25*keepShare*rate, "kept %.0f a second", perSecond)
}
