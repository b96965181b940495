package quantile

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// The sample sizes every doc quotes follow from p^n ≤ tail.
func TestMinCalls(t *testing.T) {
	require.Equal(t, 72, MinCalls(0.95, 0.95))
	require.Equal(t, 368, MinCalls(0.99, 0.95))
	require.Equal(t, 59, MinCallsUpper(0.95, 0.95))
	for _, p := range []float64{0.5, 0.9, 0.95, 0.99} {
		n := MinCalls(p, 0.95)
		require.Truef(t, TwoSided(n, p, 0.95).Bounded(), "p%v at its minimum %d", p, n)
		require.Falsef(t, TwoSided(n-1, p, 0.95).Bounded(), "p%v below its minimum %d", p, n-1)
	}
	require.True(t, Upper(59, 0.95, 0.95).BoundedAbove())
	require.False(t, Upper(58, 0.95, 0.95).BoundedAbove())
}

// Small cases checked by hand: the median of 10 calls at 95 % lies between
// the 2nd and the 9th (P(2 ≤ B ≤ 8) = 0.979; the 3rd–8th would be 0.891).
func TestMedianOfTen(t *testing.T) {
	iv := TwoSided(10, 0.5, 0.95)
	require.Equal(t, Interval{N: 10, Lo: 2, Hi: 9}, iv)
}

// Coverage: over many samples of a skewed distribution the interval holds
// the true quantile at least as often as asked (order statistics are
// conservative: coverage sits at or above the level, never below it).
func TestCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const trials = 4000
	for _, c := range []struct {
		n int
		p float64
	}{{80, 0.95}, {400, 0.99}, {30, 0.5}, {1000, 0.95}} {
		truth := -math.Log(1 - c.p) // exponential(1)
		iv := TwoSided(c.n, c.p, 0.95)
		require.True(t, iv.Bounded())
		hit := 0
		xs := make([]float64, c.n)
		for range trials {
			for i := range xs {
				xs[i] = rng.ExpFloat64()
			}
			slices.Sort(xs)
			if xs[iv.Lo-1] <= truth && truth <= xs[iv.Hi-1] {
				hit++
			}
		}
		cov := float64(hit) / trials
		require.GreaterOrEqualf(t, cov, 0.94, "n=%d p=%v coverage %.3f", c.n, c.p, cov)
		require.LessOrEqualf(t, cov, 0.995, "n=%d p=%v coverage %.3f: the interval is needlessly wide", c.n, c.p, cov)
	}
}

func TestEmptyAndRankQuantile(t *testing.T) {
	require.False(t, TwoSided(0, 0.95, 0.95).Bounded())
	require.Equal(t, 0.0, RankQuantile(1, 100))
	require.Equal(t, 1.0, RankQuantile(100, 100))
	require.Equal(t, 1.0, RankQuantile(101, 100))
	// The middle of the 51st call's share of 101: rank 50.5 of 0..100.
	require.InDelta(t, 0.505, RankQuantile(51, 101), 1e-12)
}
