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

func quantile(sorted []float64, q float64) float64 {
	return sorted[int(q*float64(len(sorted)-1))]
}

// A synthetic run: calls of 50–500 gaps drawn from a lognormal mixture (fast
// decode, with a slow tail), 10 000 gaps offered per simulated second, a cap
// of 500 per second. The kept gaps' quantiles match those of all gaps.
func TestSampledQuantilesMatchAll(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 11)) //nolint:gosec // a reproducible synthetic distribution
	s := New(500)
	clk := &fakeClock{t: time.Unix(0, 0)}
	s.now = clk.now
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
	// 40 simulated seconds at a cap of 500/s: at most 20 000, plus the first
	// window's budget (twice its share, 200); k is a whole number, so a little
	// under the cap is expected (here every 21st of 10 000/s: 476/s).
	require.LessOrEqual(t, len(kept), 20_200, "the cap holds")
	require.GreaterOrEqual(t, len(kept), 17_000, "the sampler keeps close to its cap")
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

// A load that jumps tenfold within a window still keeps at most twice the
// window's share.
func TestAJumpInLoadIsCapped(t *testing.T) {
	t.Parallel()
	s := New(1000)
	clk := &fakeClock{t: time.Unix(0, 0)}
	s.now = clk.now
	clk.step = 10 * time.Millisecond // 100 values per 10 ms: 10 000/s
	for range 100 {
		s.Take(100)
	}
	clk.step = time.Millisecond // now 100 000/s, within one window
	kept := 0
	for range 100 {
		_, n := s.Take(100)
		kept += n
	}
	require.LessOrEqual(t, kept, 2*1000/5+1000/5, "at most the budget of the windows it spans")
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
	// k = 10 after the first window: each place kept in ~300 of the calls
	// (binomial, standard deviation ~16); 200–400 is six of them either side.
	for i, c := range byPlace {
		require.InDelta(t, calls/10, c, 100, "place %d of a call kept %d times in %d calls", i, c, calls)
	}
}

// When the window's budget cuts a call's share (a burst: k has not caught up
// yet), what is kept is spread over the whole call, not its first values:
// the first events of a call often arrive together (gaps of zero), and
// keeping only them bent the percentiles of a burst of calls.
func TestACutShareIsSpreadOverTheCall(t *testing.T) {
	t.Parallel()
	s := New(100) // a budget of 40 per 200 ms window
	clk := &fakeClock{t: time.Unix(0, 0)}
	s.now = clk.now
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
