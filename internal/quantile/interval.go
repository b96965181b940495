// Package quantile bounds a percentile with the calls that measured it: a
// distribution-free (order-statistic) confidence interval, the same for a
// report's p95 and for a capacity search's verdict.
//
// Among n independent calls, the number that fall below the true p-quantile
// ξ is Binomial(n, p) whatever the shape of the distribution, so the k-th
// smallest call lies below ξ with a probability read from that binomial
// alone. An interval is a pair of ranks (order statistics) that brackets ξ
// with the asked confidence; with too few calls the needed rank falls
// outside the sample (a p99 from 100 calls has no upper bound at 95 %), and
// the interval says so instead of printing the largest call as if it were
// exact.
package quantile

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Interval is a confidence interval of a percentile as ranks of the sorted
// calls, 1-based: the Lo-th and the Hi-th smallest. Lo is 0 when no call
// bounds the percentile from below, Hi is N+1 when none bounds it from above.
type Interval struct {
	N      int
	Lo, Hi int
}

// Bounded says whether both ends are calls of the sample.
func (iv Interval) Bounded() bool { return iv.N > 0 && iv.Lo >= 1 && iv.Hi <= iv.N }

// BoundedBelow says whether the lower end is a call of the sample.
func (iv Interval) BoundedBelow() bool { return iv.N > 0 && iv.Lo >= 1 }

// BoundedAbove says whether the upper end is a call of the sample.
func (iv Interval) BoundedAbove() bool { return iv.N > 0 && iv.Hi <= iv.N }

// TwoSided is the equal-tailed interval of the p-quantile from n calls at
// confidence conf (0.95 for 95 %): P(X(Lo) ≤ ξ ≤ X(Hi)) ≥ conf, each tail at
// most (1−conf)/2.
func TwoSided(n int, p, conf float64) Interval {
	tail := (1 - conf) / 2
	return Interval{N: n, Lo: lowerRank(n, p, tail), Hi: upperRank(n, p, tail)}
}

// Upper is the one-sided bound: X(Hi) ≥ ξ with probability at least conf
// (Lo is 0). A verdict "the p95 is within the limit" needs it.
func Upper(n int, p, conf float64) Interval {
	return Interval{N: n, Lo: 0, Hi: upperRank(n, p, 1-conf)}
}

// Lower is the one-sided bound: X(Lo) ≤ ξ with probability at least conf
// (Hi is N+1). A verdict "the p95 is past the limit" needs it.
func Lower(n int, p, conf float64) Interval {
	return Interval{N: n, Lo: lowerRank(n, p, 1-conf), Hi: n + 1}
}

// upperRank is the smallest rank s with P(B ≤ s−1) ≥ 1−tail, B ~ Bin(n, p):
// the s-th smallest call is at or above ξ with probability ≥ 1−tail. n+1 when
// even the largest call is not enough.
func upperRank(n int, p, tail float64) int {
	if n <= 0 {
		return n + 1
	}
	b := distuv.Binomial{N: float64(n), P: p}
	if b.CDF(float64(n-1)) < 1-tail {
		return n + 1
	}
	lo, hi := 0, n-1 // the answer s−1 lies in [lo, hi]
	for lo < hi {
		mid := (lo + hi) / 2
		if b.CDF(float64(mid)) >= 1-tail {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo + 1
}

// lowerRank is the largest rank r with P(B ≤ r−1) ≤ tail: the r-th smallest
// call is at or below ξ with probability ≥ 1−tail. 0 when even the smallest
// call is not enough.
func lowerRank(n int, p, tail float64) int {
	if n <= 0 {
		return 0
	}
	b := distuv.Binomial{N: float64(n), P: p}
	if b.CDF(0) > tail {
		return 0
	}
	lo, hi := 0, n-1 // the answer r−1 lies in [lo, hi]
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if b.CDF(float64(mid)) <= tail {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo + 1
}

// MinCalls is the fewest calls whose equal-tailed interval of the
// p-quantile at conf has both ends in the sample: 72 for a p95 and 368 for a
// p99 at 95 %. The upper end is the binding one for p ≥ 0.5: p^n ≤ (1−conf)/2.
func MinCalls(p, conf float64) int {
	tail := (1 - conf) / 2
	q := math.Max(p, 1-p)
	return int(math.Ceil(math.Log(tail) / math.Log(q)))
}

// MinCallsUpper is the fewest calls whose one-sided upper bound of the
// p-quantile at conf is a call of the sample: 59 for a p95 at 95 %.
func MinCallsUpper(p, conf float64) int {
	return int(math.Ceil(math.Log(1-conf) / math.Log(p)))
}

// RankQuantile is the quantile (0–1) at which a DDSketch returns the r-th
// smallest of n calls. sketches-go reads the value at rank q·(n−1) as the
// first call whose cumulative count exceeds that rank, so asking for the
// exact rank r−1 lands one call low whenever q·(n−1) rounds below it; asking
// for the middle of the r-th call's share, r−½, is immune to the rounding.
// The first and the last call are quantiles 0 and 1, which a sketch that
// keeps its exact extremes answers exactly.
func RankQuantile(r, n int) float64 {
	switch {
	case n <= 1 || r <= 1:
		return 0
	case r >= n:
		return 1
	}
	return (float64(r) - 0.5) / float64(n-1)
}

// Confidence is the level of the intervals the reports give: 95 %.
const Confidence = 0.95

// Bounds is a percentile's confidence interval in the calls' own unit (an
// Interval's ranks read back as values). An end the calls cannot bound is
// NaN: with too few calls the percentile is kept, but only its known side
// can be stated.
type Bounds struct {
	Lo, Hi float64
	Calls  int // the calls it rests on
	Needed int // the fewest calls whose interval has both ends (MinCalls)
}

// TooFew says whether the calls leave an end of the interval open.
func (b Bounds) TooFew() bool { return math.IsNaN(b.Lo) || math.IsNaN(b.Hi) }

// Unknown is the Bounds of a percentile no call measured.
func Unknown(p, conf float64) Bounds {
	return Bounds{Lo: math.NaN(), Hi: math.NaN(), Needed: MinCalls(p, conf)}
}
