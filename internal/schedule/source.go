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

// Times is what a trace schedule replays: Len offsets in seconds from the
// first row (the first 0, the last Span), ascending. From(i) reads them in
// order from the i-th, one a call: a trace keeps them compact and a
// schedule reads them without a copy.
type Times struct {
	Len  int
	Span float64
	From func(i int) func() float64
}

// FixedTimes is Times over offsets held in a slice (ascending; counted from
// the first).
func FixedTimes(offsets []float64) Times {
	t := Times{Len: len(offsets), From: func(i int) func() float64 {
		return func() float64 { i++; return offsets[i-1] - offsets[0] }
	}}
	if t.Len > 0 {
		t.Span = offsets[t.Len-1] - offsets[0]
	}
	return t
}

// offsetSource replays fixed offsets (a trace's), once or looped: the loop
// starts again one mean gap after the last row, so the joins keep the
// trace's mean rate.
type offsetSource struct {
	times  Times
	read   func() float64 // reads on from row g % Len; nil: not yet positioned
	loop   bool
	period float64
	g      int
}

func newOffsetSource(times Times, loop bool) *offsetSource {
	s := &offsetSource{times: times, loop: loop}
	if n := times.Len; n > 0 {
		s.period = times.Span
		if n > 1 {
			s.period += times.Span / float64(n-1)
		}
		if s.period <= 0 {
			s.period = 1 // every row at one instant: loop once a second
		}
	}
	return s
}

func (s *offsetSource) next() (float64, bool) {
	n := s.times.Len
	if n == 0 || (!s.loop && s.g >= n) {
		return 0, false
	}
	cycle, i := s.g/n, s.g%n
	if i == 0 || s.read == nil {
		s.read = s.times.From(i)
	}
	s.g++
	return float64(cycle)*s.period + s.read(), true
}

// clone reads on from the same row with a reader of its own.
func (s *offsetSource) clone() source { c := *s; c.read = nil; return &c }
