package queuesim

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// M/D/1: the Pollaczek–Khinchine mean wait, ρS / (2(1−ρ)).
func TestMD1MeanWait(t *testing.T) {
	q := Queue{Slots: 1, Service: 0.2}
	for _, rho := range []float64{0.5, 0.8} {
		rate := rho / q.Service
		want := rho * q.Service / (2 * (1 - rho))
		got := mean(q.Waits(Poisson(), rate, 400_000, 1))
		require.InDeltaf(t, want, got, 0.03*want, "ρ=%v", rho)
	}
}

// erlangC is the probability that an arrival of an M/M/c queue waits, with
// offered load a = λ/μ.
func erlangC(c int, a float64) float64 {
	term, sum := 1.0, 1.0 // a^k / k!, summed for k < c
	for k := 1; k < c; k++ {
		term *= a / float64(k)
		sum += term
	}
	last := term * a / float64(c) / (1 - a/float64(c))
	return last / (sum + last)
}

// M/M/c: Erlang C's mean wait, C(c, a) / (cμ − λ). It checks the slots'
// bookkeeping, which M/D/1 does not exercise.
func TestMMcMeanWait(t *testing.T) {
	q := Queue{Slots: 4, Service: 0.5, ExpService: true}
	for _, rate := range []float64{5, 7} {
		mu := 1 / q.Service
		want := erlangC(q.Slots, rate/mu) / (float64(q.Slots)*mu - rate)
		got := mean(q.Waits(Poisson(), rate, 400_000, 2))
		require.InDeltaf(t, want, got, 0.04*want, "λ=%v", rate)
	}
}

// Constant arrivals below the slots' rate never wait (D/D/c), and the
// boundary of any TTFT limit above the first token is the saturation itself.
func TestConstantArrivals(t *testing.T) {
	q := Queue{Slots: 4, Service: 0.2, FirstToken: 0.01}
	require.Zero(t, q.TTFTQuantile(Constant(), 19.9, 0.99, 10_000, 1)-q.FirstToken)
	b, err := q.Boundary(Constant(), 0.95, 0.1, 20_000, 1, 0.01)
	require.NoError(t, err)
	require.InDelta(t, 20, b, 0.1)
}

// The example: 4 slots, 0.49 s a call, the first token 0.1 s in.
// Its TTFT p95 is 0.40 s at 5 req/s and 0.62 s at 6, so a p95<400ms
// objective holds up to about 5 req/s, well below the saturation at 8.2.
func TestMD4Percentiles(t *testing.T) {
	q := Queue{Slots: 4, Service: 0.49, FirstToken: 0.1}
	require.InDelta(t, 0.40, q.TTFTQuantile(Poisson(), 5, 0.95, 200_000, 3), 0.02)
	require.InDelta(t, 0.62, q.TTFTQuantile(Poisson(), 6, 0.95, 200_000, 3), 0.03)
	b, err := q.Boundary(Poisson(), 0.95, 0.4, 200_000, 3, 0.01)
	require.NoError(t, err)
	require.InDelta(t, 5.0, b, 0.15)
	// Bursty arrivals queue more at the same mean rate: a lower boundary.
	bb, err := q.Boundary(Bursty(2), 0.95, 0.4, 200_000, 3, 0.01)
	require.NoError(t, err)
	require.Less(t, bb, b*0.8)
	_, err = q.Boundary(Poisson(), 0.95, 0.05, 10_000, 3, 0.01)
	require.ErrorIs(t, err, ErrNoBoundary, "a limit under the first token is never met")
}

// Gamma gaps have mean 1 and the asked coefficient of variation.
func TestGaps(t *testing.T) {
	for _, cv := range []float64{1, 2} {
		g := Bursty(cv).Gaps(7)
		var s, ss float64
		const n = 400_000
		for range n {
			x := g()
			s += x
			ss += x * x
		}
		m := s / n
		sd := math.Sqrt(ss/n - m*m)
		require.InDelta(t, 1, m, 0.02)
		require.InDelta(t, cv, sd/m, 0.05*cv)
	}
}

// Runs long enough measure the steady state's quantile, every one of them
// near it; short runs near the capacity swing around it, wider under bursty
// arrivals than under Poisson at the same share of the boundary, and wider
// than an order-statistic interval from the run's calls would say (those
// calls are not independent).
func TestRunQuantiles(t *testing.T) {
	q := Queue{Slots: 16, Service: 0.2, FirstToken: 0.03}
	steady := q.TTFTQuantile(Poisson(), 72, 0.95, 1_000_000, 1)
	long := q.RunQuantiles(Poisson(), 72, 0.95, 20, 600, 40, 1)
	require.Len(t, long, 40)
	require.True(t, slices.IsSorted(long))
	require.InDelta(t, steady, long[len(long)/2], 0.1*steady, "a long run's p95 is the steady state's")
	require.Less(t, long[len(long)-1]/long[0], 1.5)

	spread := func(p Process, rate float64) float64 {
		rs := q.RunQuantiles(p, rate, 0.95, 5, 15, 1000, 2)
		return rs[989] / rs[499] // the 99th percentile run over the median one
	}
	bq := Queue{Slots: 16, Service: 0.2, FirstToken: 0.03}
	pb, err := bq.Boundary(Poisson(), 0.95, 0.2, 400_000, 1, 0.01)
	require.NoError(t, err)
	bb, err := bq.Boundary(Bursty(2), 0.95, 0.2, 400_000, 1, 0.01)
	require.NoError(t, err)
	poisson, bursty := spread(Poisson(), 0.95*pb), spread(Bursty(2), 0.95*bb)
	require.Greater(t, bursty, poisson, "bursty runs swing wider")
	// Ten seconds at ~70 req/s is ~700 calls: the 99th-percentile order
	// statistic bound of their p95 is within ~2 % of it; runs swing far more.
	require.Greater(t, poisson, 1.1)

	idle := q.RunQuantiles(Poisson(), 1, 0.95, 5, 15, 50, 3)
	require.Equal(t, q.FirstToken, idle[len(idle)-1], "at 1 req/s no call waits")
	require.Empty(t, q.RunQuantiles(Constant(), 0.01, 0.95, 5, 15, 3, 1), "a run with no measured call has no quantile")
}
