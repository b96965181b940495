package dataset

import (
	"errors"
	"fmt"
	"math"
)

// schedule is a deterministic, periodic sequence of categories whose every
// prefix holds each category in proportion to its weight, within one draw.
// It is Tijdeman's solution of the "chairman assignment problem" (1980): at
// draw t, among the categories that are at least σ = 1/(2k−2) draws behind
// their quota, take the one whose next turn is due earliest. That guarantees
// |t·p_i − count_i(t)| ≤ 1 − σ for every category i and every t, so any window
// of n consecutive draws holds n·p_i ± 2 of category i, and over a whole test
// the proportions are exact to within one draw. Random draws, by contrast,
// drift by ±√n: over 10 000 draws a 10 % class would be off by ~30.
type schedule struct {
	weights []int64  // integer weights, reduced
	period  int64    // sum of weights
	cat     []uint16 // category of draw t mod period
	rank    []uint32 // occurrences of cat[t] before t within the period
}

// maxPeriod bounds the precomputed table; weights whose exact period would be
// longer are rounded to this resolution (a relative error below 1/65536).
const maxPeriod = 1 << 16

// maxCategories keeps category indices small.
const maxCategories = 1024

func newSchedule(weights []float64) (*schedule, error) {
	k := len(weights)
	if k == 0 {
		return nil, errors.New("no category has a positive weight")
	}
	if k > maxCategories {
		return nil, fmt.Errorf("%d categories, at most %d", k, maxCategories)
	}
	w, err := integerWeights(weights)
	if err != nil {
		return nil, err
	}
	var period int64
	for _, x := range w {
		period += x
	}
	s := &schedule{weights: w, period: period, cat: make([]uint16, period), rank: make([]uint32, period)}
	count := make([]int64, k)
	// Quantities are scaled by D = 2k−2 to stay in integers: the "behind by σ"
	// test t·w_i − x_i·W ≥ σ·W becomes D·(t·w_i − x_i·W) ≥ W, and the due time
	// (x_i + 1 − σ)/w_i becomes (D·(x_i+1) − 1)/w_i.
	d := int64(2*k - 2)
	for t := int64(1); t <= period; t++ {
		best := -1
		for i := range k {
			if k > 1 && d*(t*w[i]-count[i]*period) < period {
				continue
			}
			if best < 0 || dueBefore(d, count[i], w[i], count[best], w[best]) {
				best = i
			}
		}
		if best < 0 { // cannot happen for k ≥ 2 (Tijdeman), nor for k = 1
			return nil, errors.New("internal error: empty schedule step")
		}
		s.cat[t-1] = uint16(best)         //nolint:gosec // best < maxCategories
		s.rank[t-1] = uint32(count[best]) // #nosec G115 -- < period
		count[best]++
	}
	return s, nil
}

// dueBefore compares (D(x_a+1)−1)/w_a < (D(x_b+1)−1)/w_b.
func dueBefore(d, xa, wa, xb, wb int64) bool {
	return (d*(xa+1)-1)*wb < (d*(xb+1)-1)*wa
}

// integerWeights turns positive weights into integers with a period of at
// most maxPeriod, exactly when they are small integers already.
func integerWeights(weights []float64) ([]int64, error) {
	var sum float64
	exact := true
	for _, x := range weights {
		if !(x > 0) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("weight %v must be a positive finite number", x)
		}
		sum += x
		if x != math.Trunc(x) {
			exact = false
		}
	}
	out := make([]int64, len(weights))
	if exact && sum <= maxPeriod {
		for i, x := range weights {
			out[i] = int64(x)
		}
	} else {
		for i, x := range weights {
			out[i] = max(1, int64(math.Round(x/sum*maxPeriod)))
		}
	}
	g := out[0]
	for _, x := range out[1:] {
		g = gcd(g, x)
	}
	for i := range out {
		out[i] /= g
	}
	return out, nil
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// at returns the category of draw n and how many draws of that category came
// before it.
func (s *schedule) at(n uint64) (category int, occurrence uint64) {
	p := uint64(s.period) // #nosec G115 -- positive
	cycle, pos := n/p, n%p
	c := int(s.cat[pos])
	return c, cycle*uint64(s.weights[c]) + uint64(s.rank[pos]) // #nosec G115 -- positive
}

// share is category i's exact proportion in the schedule.
func (s *schedule) share(i int) float64 { return float64(s.weights[i]) / float64(s.period) }
