package schedule

import (
	"math/rand/v2"

	"github.com/llmstream/xk6-llmstream/internal/dataset"
)

// source is a schedule's credits in global order, as positions on its axis
// (non-decreasing). ok is false when there are no more.
type source interface {
	next() (pos float64, ok bool)
	// clone is an independent copy at the same point, for looking ahead
	// (counting the credits never sent) without advancing the schedule.
	clone() source
}

// evenSource is a constant rate: credit g at position g.
type evenSource struct{ g float64 }

func (s *evenSource) next() (float64, bool) { p := s.g; s.g++; return p, true }
func (s *evenSource) clone() source         { c := *s; return &c }

// gapSource draws unit-mean gaps from a seeded stream: exponential (shape 1,
// Poisson arrivals) or gamma with shape 1/cv² (cv > 1: bursty). The first
// credit comes one gap after the start, as in a Poisson process.
type gapSource struct {
	shape float64
	pcg   rand.PCG
	pos   float64
}

func newGapSource(cv float64, seed uint64) *gapSource {
	return &gapSource{shape: 1 / (cv * cv), pcg: *rand.NewPCG(seed, 0x5c4ed)}
}

func (s *gapSource) next() (float64, bool) {
	r := rand.New(&s.pcg) // #nosec G404 -- load shapes, not crypto
	if s.shape == 1 {
		s.pos += r.ExpFloat64()
	} else {
		s.pos += dataset.GammaSample(r, s.shape) / s.shape
	}
	return s.pos, true
}

func (s *gapSource) clone() source { c := *s; return &c }

// offsetSource replays fixed offsets (a trace's, in seconds from its first
// row), once or looped: the loop starts again one mean gap after the last
// row, so the joins keep the trace's mean rate.
type offsetSource struct {
	offsets []float64 // ascending, shared read-only by every clone
	loop    bool
	period  float64
	g       int
}

func newOffsetSource(offsets []float64, loop bool) *offsetSource {
	s := &offsetSource{offsets: offsets, loop: loop}
	if n := len(offsets); n > 0 {
		span := offsets[n-1] - offsets[0]
		s.period = span
		if n > 1 {
			s.period += span / float64(n-1)
		}
		if s.period <= 0 {
			s.period = 1 // every row at one instant: loop once a second
		}
	}
	return s
}

func (s *offsetSource) next() (float64, bool) {
	n := len(s.offsets)
	if n == 0 || (!s.loop && s.g >= n) {
		return 0, false
	}
	cycle, i := s.g/n, s.g%n
	s.g++
	return float64(cycle)*s.period + s.offsets[i] - s.offsets[0], true
}

func (s *offsetSource) clone() source { c := *s; return &c }
