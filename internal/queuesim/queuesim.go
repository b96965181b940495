// Package queuesim computes the truth a capacity search is checked against:
// a discrete-event simulation of a server of c slots, each holding a call for
// a fixed service time, first come first served (a G/D/c queue), fed by
// constant, Poisson or bursty (gamma) arrivals. A call's time to first token
// is its wait for a slot plus the time from taking the slot to its first
// token, so the simulation gives a TTFT percentile at any rate, and the rate
// at which that percentile meets a limit.
//
// Queueing theory has no closed form for a percentile of M/D/c waits (and
// none at all for gamma arrivals); a simulation of a few hundred thousand
// arrivals is exact to a fraction of a percent and takes milliseconds.
package queuesim

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/llmstream/xk6-llmstream/internal/dataset"
)

// Process is an arrival process by the coefficient of variation of its gaps:
// 0 is constant arrivals, 1 Poisson, above 1 bursty (gamma gaps of shape
// 1/cv²), as the load generator draws them.
type Process struct{ CV float64 }

// Constant is evenly spaced arrivals.
func Constant() Process { return Process{CV: 0} }

// Poisson is exponential gaps.
func Poisson() Process { return Process{CV: 1} }

// Bursty is gamma arrivals whose gaps have coefficient of variation cv.
func Bursty(cv float64) Process { return Process{CV: cv} }

// Gaps returns a stream of gaps of mean 1 (seconds at a rate of 1 req/s),
// seeded.
func (p Process) Gaps(seed uint64) func() float64 {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)) // #nosec G404 -- a simulation, not crypto
	switch p.CV {
	case 0:
		return func() float64 { return 1 }
	case 1:
		return r.ExpFloat64
	default:
		shape := 1 / (p.CV * p.CV)
		return func() float64 { return dataset.GammaSample(r, shape) / shape }
	}
}

// Queue is the server: Slots slots, each holding a call for Service seconds,
// the first token FirstToken seconds after the call took its slot.
type Queue struct {
	Slots      int
	Service    float64
	FirstToken float64
	// ExpService draws each call's service time from an exponential of mean
	// Service instead (an M/M/c queue: the closed form the simulation is
	// tested against).
	ExpService bool
}

// warmupShare is the share of the first arrivals left out of every figure:
// the queue starts empty, and its steady state is what is asked.
const warmupShare = 0.05

// Waits simulates n arrivals at rate (req/s) and returns each call's wait for
// a slot, seconds, in arrival order, the first warmupShare left out.
func (q Queue) Waits(p Process, rate float64, n int, seed uint64) []float64 {
	gap := p.Gaps(seed)
	svc := rand.New(rand.NewPCG(seed, 0x2545f4914f6cdd1d)) // #nosec G404 -- a simulation
	free := make([]float64, q.Slots)                       // when each slot is next free
	skip := int(float64(n) * warmupShare)
	out := make([]float64, 0, n-skip)
	at := 0.0
	for i := range n {
		at += gap() / rate
		begin := q.take(free, at, svc)
		if i >= skip {
			out = append(out, begin-at)
		}
	}
	return out
}

// take gives a call that arrives at at the slot free first (Kiefer–Wolfowitz:
// FIFO takes it) and returns when it begins there.
func (q Queue) take(free []float64, at float64, svc *rand.Rand) float64 {
	k := 0
	for j := 1; j < len(free); j++ {
		if free[j] < free[k] {
			k = j
		}
	}
	begin := math.Max(at, free[k])
	s := q.Service
	if q.ExpService {
		s = svc.ExpFloat64() * q.Service
	}
	free[k] = begin + s
	return begin
}

// RunQuantiles simulates runs plain load tests of the queue and returns the
// TTFT quantile each measured, seconds, sorted: a run starts on an idle
// server, sends arrivals at rate for length seconds and measures the calls
// sent after its first warmup seconds, as a load test that leaves out its
// warm-up does. Near a capacity the quantile of one such run swings far
// around the steady state's (a burst and its backlog make a run of slow
// calls, one event however many calls it holds), and how far is the run's
// own distribution: what a test needs to tell one run's figure from a
// broken objective, where an order-statistic bound treats the calls as
// independent and is too sure.
func (q Queue) RunQuantiles(p Process, rate, quantile, warmup, length float64, runs int, seed uint64) []float64 {
	out := make([]float64, 0, runs)
	free := make([]float64, q.Slots)
	var ttft []float64
	for r := range runs {
		gap := p.Gaps(seed + uint64(r))                                  // #nosec G115 -- a run's index is small
		svc := rand.New(rand.NewPCG(seed+uint64(r), 0x2545f4914f6cdd1d)) // #nosec G404 G115 -- a simulation
		clear(free)
		ttft = ttft[:0]
		for at := gap() / rate; at < length; at += gap() / rate {
			begin := q.take(free, at, svc)
			if at >= warmup {
				ttft = append(ttft, begin-at+q.FirstToken)
			}
		}
		if len(ttft) == 0 {
			continue
		}
		slices.Sort(ttft)
		out = append(out, sorted(ttft, quantile))
	}
	slices.Sort(out)
	return out
}

// TTFTQuantile is the q-quantile of TTFT (wait + FirstToken), seconds, at
// rate, from n simulated arrivals.
func (q Queue) TTFTQuantile(p Process, rate, quantile float64, n int, seed uint64) float64 {
	w := q.Waits(p, rate, n, seed)
	slices.Sort(w)
	return sorted(w, quantile) + q.FirstToken
}

// sorted is the q-quantile of sorted xs (the nearest rank above).
func sorted(xs []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(xs)))) - 1
	return xs[min(max(i, 0), len(xs)-1)]
}

// ErrNoBoundary is Boundary's answer when even the lowest rate fails.
var ErrNoBoundary = errors.New("queuesim: the objective fails at every rate searched")

// Boundary is the highest rate (req/s) at which the TTFT quantile stays
// within limit (seconds), bisected to a relative tolerance tol, each rate
// simulated with n arrivals on the same random path (common random numbers:
// with the gaps only scaled, every call's wait grows with the rate, so the
// quantile is monotone in it and the bisection well defined). The search
// runs up to the queue's saturation, Slots / Service.
func (q Queue) Boundary(p Process, quantile, limit float64, n int, seed uint64, tol float64) (float64, error) {
	meets := func(rate float64) bool { return q.TTFTQuantile(p, rate, quantile, n, seed) <= limit }
	lo, hi := 0.0, float64(q.Slots)/q.Service
	if !meets(hi * 1e-3) {
		return 0, ErrNoBoundary
	}
	for (hi-lo)/hi > tol/4 {
		mid := (lo + hi) / 2
		if meets(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2, nil
}
