package queuesim

import (
	"math"
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
