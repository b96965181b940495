package sketch

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/llmstream/xk6-llmstream/internal/quantile"
)

// Each end of the interval is the order statistic the ranks name, read
// from the sketch and widened by its error: it contains the exact value
// and stays within the sketch's error of it, at every n and rank (a float
// rounding in the rank would read the neighbouring call instead). The calls
// are 5 % apart, each in a bucket of its own, so a neighbour is never
// within the error.
func TestIntervalReadsTheRanksCalls(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := 2; n <= 420; n++ {
		s := New(FineAlpha)
		vals := make([]float64, n)
		for i := range vals {
			vals[i] = 10 * math.Pow(1.05, float64(i))
		}
		for _, i := range rng.Perm(n) {
			s.Add(vals[i])
		}
		sort.Float64s(vals)
		for _, p := range []float64{0.5, 0.9, 0.95, 0.99} {
			iv := quantile.TwoSided(n, p, quantile.Confidence)
			b := s.Interval(p, quantile.Confidence)
			if b.Calls != n || b.Needed != quantile.MinCalls(p, quantile.Confidence) {
				t.Fatalf("n=%d p=%v: calls %d needed %d", n, p, b.Calls, b.Needed)
			}
			if iv.BoundedBelow() {
				x := vals[iv.Lo-1]
				if b.Lo > x || b.Lo < x*(1-FineAlpha)/(1+FineAlpha) {
					t.Errorf("n=%d p=%v: lower end %g for the %d-th call %g", n, p, b.Lo, iv.Lo, x)
				}
			} else if !math.IsNaN(b.Lo) {
				t.Errorf("n=%d p=%v: a lower end %g the calls cannot give", n, p, b.Lo)
			}
			if iv.BoundedAbove() {
				x := vals[iv.Hi-1]
				if b.Hi < x || b.Hi > x*(1+FineAlpha)/(1-FineAlpha) {
					t.Errorf("n=%d p=%v: upper end %g for the %d-th call %g", n, p, b.Hi, iv.Hi, x)
				}
			} else if !math.IsNaN(b.Hi) {
				t.Errorf("n=%d p=%v: an upper end %g the calls cannot give", n, p, b.Hi)
			}
			if b.TooFew() != (n < b.Needed) {
				t.Errorf("n=%d p=%v: too few %v with %d needed", n, p, b.TooFew(), b.Needed)
			}
		}
	}
}

// The sample sizes the reports quote: 32 calls bound neither a p95 nor a
// p99 from above (72 and 368 needed) but give both a lower end; 400 bound
// both.
func TestIntervalTooFew(t *testing.T) {
	s := New(FineAlpha)
	for i := 1; i <= 32; i++ {
		s.Add(float64(10 * i))
	}
	for _, p := range []float64{0.95, 0.99} {
		b := s.Interval(p, quantile.Confidence)
		if !b.TooFew() || math.IsNaN(b.Lo) || !math.IsNaN(b.Hi) {
			t.Errorf("p%v of 32 calls: %+v", p, b)
		}
	}
	if b := s.Interval(0.5, quantile.Confidence); b.TooFew() || !(b.Lo < s.Quantile(0.5) && s.Quantile(0.5) < b.Hi) {
		t.Errorf("median of 32 calls: %+v around %g", b, s.Quantile(0.5))
	}
	for i := 33; i <= 400; i++ {
		s.Add(float64(10 * i))
	}
	for _, p := range []float64{0.5, 0.95, 0.99} {
		if b := s.Interval(p, quantile.Confidence); b.TooFew() {
			t.Errorf("p%v of 400 calls: %+v", p, b)
		}
	}
	if b := (*Sketch)(nil).Interval(0.95, quantile.Confidence); !b.TooFew() || b.Calls != 0 {
		t.Errorf("no calls: %+v", b)
	}
}

// Read from a sketch, the interval still holds the true percentile at
// least as often as asked: the sketch's error is added, never ignored.
func TestIntervalCoverageThroughTheSketch(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const trials = 1500
	for _, c := range []struct {
		n int
		p float64
	}{{100, 0.95}, {400, 0.99}} {
		truth := 200 * -math.Log(1-c.p) // exponential, mean 200 ms
		hit := 0
		for range trials {
			s := New(FineAlpha)
			for range c.n {
				s.Add(200 * rng.ExpFloat64())
			}
			b := s.Interval(c.p, quantile.Confidence)
			if b.Lo <= truth && truth <= b.Hi {
				hit++
			}
		}
		if cov := float64(hit) / trials; cov < 0.94 {
			t.Errorf("n=%d p=%v: coverage %.3f", c.n, c.p, cov)
		}
	}
}
