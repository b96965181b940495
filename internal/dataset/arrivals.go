package dataset

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"
)

// Arrivals is an open-model arrival process shared by every VU of a process:
// production traffic comes in bursts and waves, while k6's arrival-rate
// executors start iterations at perfectly even intervals.
//
// Arrival times are one sequence for the whole process, drawn from a seeded
// stream: inter-arrival gaps are exponential (Poisson arrivals) or gamma
// distributed with a coefficient of variation cv (cv > 1: bursty). VUs claim
// arrivals in turn and sleep until theirs. One shared sequence matters:
// splitting a bursty process into independent per-VU streams would average
// the bursts away (superposed independent streams tend to Poisson), and the
// process would change with the VU count.
//
// For the same reason a test split across k6 instances does not run an
// independent process per instance: every instance draws the one seeded
// sequence of the whole test and keeps only its share of the arrivals,
// striped like k6 stripes iterations (see Share). Together the instances run
// exactly the configured process, bursts included, at the configured rate.
type Arrivals struct {
	rate  float64
	shape float64 // gamma shape k = 1/cv²; 1 = exponential
	seed  uint64
	share Share
	mu    sync.Mutex
	s     stream
	now   func() time.Time

	started bool
	origin  time.Time
	next    float64 // seconds from origin of the next unclaimed arrival
	claimed uint64
	late    uint64
	maxLag  float64

	parts map[string]*Arrivals // by segment and sequence
}

// stream is the seeded sequence of the whole test's arrivals, filtered to one
// instance's share.
type stream struct {
	rate, shape float64
	r           *rand.Rand
	share       Share
	t           float64 // seconds from the start of the last arrival generated
	g           uint64  // global index of the next arrival generated
}

func newStream(rate, shape float64, seed uint64, share Share) stream {
	return stream{rate: rate, shape: shape, share: share, r: rand.New(rand.NewPCG(seed, 0xa77))} // #nosec G404 -- not crypto
}

// arrival returns the time of this instance's next arrival.
func (s *stream) arrival() float64 {
	for {
		s.t += s.gap()
		g := s.g
		s.g++
		if s.share.Owns(g) {
			return s.t
		}
	}
}

// gap draws the next inter-arrival time in seconds (mean 1/rate).
func (s *stream) gap() float64 {
	if s.shape == 1 {
		return s.r.ExpFloat64() / s.rate
	}
	// gamma(k, θ) with mean kθ = 1/rate
	return GammaSample(s.r, s.shape) / (s.shape * s.rate)
}

// ArrivalOptions configure an arrival process.
type ArrivalOptions struct {
	Rate float64 `opt:"rate"`                                                               // mean arrivals per second of the whole test (all instances together)
	CV   float64 `opt:"cv,positive" want:"a number in (0, 30] (1 is Poisson, the default)"` // coefficient of variation of the gaps; absent or 1 = Poisson
	Seed uint64  `opt:"seed"`
}

// maxCV keeps the gamma shape away from values where samples underflow.
const maxCV = 30

// NewArrivals validates the options and returns a process whose clock starts
// at the first claim.
func NewArrivals(o ArrivalOptions) (*Arrivals, error) {
	if !(o.Rate > 0) || math.IsInf(o.Rate, 0) {
		return nil, fmt.Errorf("arrivals: rate must be a positive number of arrivals per second, got %v", o.Rate)
	}
	cv := o.CV
	if cv == 0 {
		cv = 1
	}
	if !(cv > 0) || cv > maxCV {
		return nil, fmt.Errorf("arrivals: cv must be in (0, %d], got %v", maxCV, o.CV)
	}
	shape := 1 / (cv * cv)
	return &Arrivals{rate: o.Rate, shape: shape, seed: o.Seed, s: newStream(o.Rate, shape, o.Seed, Share{}), now: time.Now}, nil
}

// Part returns the process of the instance running share s: the same
// seeded sequence of the whole test, keeping only that instance's arrivals.
// Every caller gets the same process (one clock, one set of counters).
func (a *Arrivals) Part(s Share) *Arrivals {
	if s.Full() {
		return a
	}
	key := s.Segment() + " in " + s.Sequence()
	a.mu.Lock()
	defer a.mu.Unlock()
	p, ok := a.parts[key]
	if !ok {
		p = &Arrivals{rate: a.rate, shape: a.shape, seed: a.seed, share: s, s: newStream(a.rate, a.shape, a.seed, s), now: a.now}
		if a.parts == nil {
			a.parts = map[string]*Arrivals{}
		}
		a.parts[key] = p
	}
	return p
}

// Next claims the next arrival and returns how long to wait for it; zero
// when it is already due (every VU was busy: the arrival is late, and
// counted as such).
func (a *Arrivals) Next() time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	if !a.started {
		a.started, a.origin = true, now
		a.next = a.s.arrival()
	}
	at := a.next
	a.next = a.s.arrival()
	a.claimed++
	wait := at - now.Sub(a.origin).Seconds()
	if wait < 0 {
		// A claim more than a millisecond behind is late; less is scheduling noise.
		if -wait > 0.001 {
			a.late++
			a.maxLag = max(a.maxLag, -wait)
		}
		return 0
	}
	return time.Duration(wait * float64(time.Second))
}

// Offsets returns the arrival times, in seconds from the start, of the first
// duration seconds, from a fresh copy of the same stream (the process itself
// is not advanced): this instance's whole schedule, for scripts that plan
// ahead.
func (a *Arrivals) Offsets(duration float64) ([]float64, error) {
	if !(duration > 0) || duration*a.rate > 10_000_000 {
		return nil, errors.New("arrivals: offsets need a positive duration with at most 10 million arrivals")
	}
	c := newStream(a.rate, a.shape, a.seed, a.share)
	var out []float64
	for t := c.arrival(); t < duration; t = c.arrival() {
		out = append(out, t)
	}
	return out, nil
}

// ArrivalStats says how well the VUs kept up with the process.
type ArrivalStats struct {
	Claimed uint64
	Late    uint64  // arrivals claimed after their time: add VUs
	MaxLag  float64 // seconds, the latest a claim came
	Rate    float64 // of the whole test
	CV      float64
	Segment string  // the execution segment this instance runs ("0:1": all)
	Share   float64 // the fraction of the arrivals this instance runs
}

// Stats returns the counters so far.
func (a *Arrivals) Stats() ArrivalStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	return ArrivalStats{Claimed: a.claimed, Late: a.late, MaxLag: a.maxLag, Rate: a.rate, CV: 1 / math.Sqrt(a.shape),
		Segment: a.share.Segment(), Share: a.share.Fraction()}
}

// GammaSample draws from Gamma(k, 1) (Marsaglia and Tsang, 2000; for k < 1
// the k+1 draw is scaled by U^(1/k)): the gaps of bursty arrivals, here and
// in internal/schedule.
func GammaSample(r *rand.Rand, k float64) float64 {
	if k < 1 {
		return GammaSample(r, k+1) * math.Pow(r.Float64(), 1/k)
	}
	d := k - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}
