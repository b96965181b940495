package report

import (
	"errors"
	"fmt"
	"math"
)

// Sketch is a log-bucketed histogram in the spirit of DDSketch: every value v
// lands in bucket ceil(log_gamma(v)), so any quantile it returns is within a
// relative error alpha of a value that was really added, whatever the
// distribution. Two sketches with the same alpha merge exactly (bucket counts
// add), which is what lets per-stage, per-model and per-bucket statistics be
// combined after the run without keeping the samples. Memory depends on the
// range of the values (about ln(max/min)/(2·alpha) buckets), never on how many
// were added.
//
// A Sketch is not safe for concurrent use; the Collector serialises access.
type Sketch struct {
	Alpha  float64  `json:"alpha"`
	Zero   uint64   `json:"zero"`   // values at or below minIndexable (and negative ones clamped to 0)
	Offset int32    `json:"offset"` // bucket index of Counts[0]
	Counts []uint64 `json:"counts"`
	N      uint64   `json:"n"`
	Sum    float64  `json:"sum"`
	Min    float64  `json:"min"`
	Max    float64  `json:"max"`

	logGamma float64
}

const (
	// minIndexable is the smallest value that gets its own bucket. Durations are
	// kept in milliseconds, so this is one nanosecond: anything below is "zero".
	minIndexable = 1e-6
	// maxBuckets bounds a sketch even for absurd inputs: beyond it the lowest
	// buckets are folded together (the tail that matters for latency is the high one).
	maxBuckets = 4096
	// FineAlpha is the accuracy of the per-group sketches the report quotes.
	FineAlpha = 0.01
	// CoarseAlpha is the accuracy of the per-second sketches, of which there are thousands.
	CoarseAlpha = 0.05
)

// NewSketch returns an empty sketch with relative accuracy alpha (0 < alpha < 1).
func NewSketch(alpha float64) *Sketch {
	s := &Sketch{Alpha: alpha}
	s.init()
	return s
}

func (s *Sketch) init() {
	gamma := (1 + s.Alpha) / (1 - s.Alpha)
	s.logGamma = math.Log(gamma)
}

// index maps a positive value to its bucket.
func (s *Sketch) index(v float64) int32 {
	return int32(math.Ceil(math.Log(v) / s.logGamma))
}

// bucketValue is the representative of bucket i: the point whose relative
// distance to both bucket edges is alpha.
func (s *Sketch) bucketValue(i int32) float64 {
	return 2 * math.Exp(float64(i)*s.logGamma) / (1 + math.Exp(s.logGamma))
}

// Add records one value. NaN and infinities are ignored: they are "not measured".
func (s *Sketch) Add(v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	if v < 0 {
		v = 0
	}
	s.addStats(v)
	if v <= minIndexable {
		s.Zero++
		return
	}
	s.addIndex(s.index(v), 1)
}

func (s *Sketch) addStats(v float64) {
	if s.N == 0 || v < s.Min {
		s.Min = v
	}
	if s.N == 0 || v > s.Max {
		s.Max = v
	}
	s.N++
	s.Sum += v
}

func (s *Sketch) addIndex(i int32, c uint64) {
	if len(s.Counts) == 0 {
		s.Offset = i
		s.Counts = append(s.Counts, c)
		return
	}
	switch {
	case i < s.Offset:
		grow := int(s.Offset - i)
		if len(s.Counts)+grow > maxBuckets {
			// Fold into the lowest bucket rather than grow past the bound.
			s.Counts[0] += c
			return
		}
		nc := make([]uint64, len(s.Counts)+grow, len(s.Counts)+grow+16)
		copy(nc[grow:], s.Counts)
		s.Counts = nc
		s.Offset = i
	case int(i-s.Offset) >= len(s.Counts):
		need := int(i-s.Offset) + 1
		for len(s.Counts) < need {
			s.Counts = append(s.Counts, 0)
		}
		if len(s.Counts) > maxBuckets {
			s.foldLow(len(s.Counts) - maxBuckets)
		}
	}
	s.Counts[i-s.Offset] += c
}

// foldLow merges the k lowest buckets into the next one.
func (s *Sketch) foldLow(k int) {
	var moved uint64
	for _, c := range s.Counts[:k] {
		moved += c
	}
	s.Counts = append(s.Counts[:0], s.Counts[k:]...)
	s.Counts[0] += moved
	s.Offset += int32(k)
}

// Merge adds every value of o into s. Both must have the same alpha.
func (s *Sketch) Merge(o *Sketch) error {
	if o == nil || o.N == 0 {
		return nil
	}
	if o.Alpha != s.Alpha {
		return fmt.Errorf("report: cannot merge sketches with accuracy %g and %g", s.Alpha, o.Alpha)
	}
	if s.N == 0 || o.Min < s.Min {
		s.Min = o.Min
	}
	if s.N == 0 || o.Max > s.Max {
		s.Max = o.Max
	}
	s.N += o.N
	s.Sum += o.Sum
	s.Zero += o.Zero
	for j, c := range o.Counts {
		if c != 0 {
			s.addIndex(o.Offset+int32(j), c)
		}
	}
	return nil
}

// Clone returns an independent copy.
func (s *Sketch) Clone() *Sketch {
	c := *s
	c.Counts = append([]uint64(nil), s.Counts...)
	return &c
}

// Count is the number of values added.
func (s *Sketch) Count() uint64 { return s.N }

// Mean is the exact arithmetic mean (NaN when empty).
func (s *Sketch) Mean() float64 {
	if s.N == 0 {
		return math.NaN()
	}
	return s.Sum / float64(s.N)
}

// Quantile returns the q-quantile (0 ≤ q ≤ 1) within relative error alpha,
// NaN when the sketch is empty.
func (s *Sketch) Quantile(q float64) float64 {
	if s.N == 0 || math.IsNaN(q) {
		return math.NaN()
	}
	q = math.Max(0, math.Min(1, q))
	rank := uint64(q * float64(s.N-1))
	if rank < s.Zero {
		return s.clamp(0)
	}
	seen := s.Zero
	for j, c := range s.Counts {
		seen += c
		if seen > rank {
			return s.clamp(s.bucketValue(s.Offset + int32(j)))
		}
	}
	return s.Max
}

func (s *Sketch) clamp(v float64) float64 { return math.Max(s.Min, math.Min(s.Max, v)) }

// FractionBelow estimates the share of values ≤ v (bucket resolution).
func (s *Sketch) FractionBelow(v float64) float64 {
	if s.N == 0 {
		return math.NaN()
	}
	below := s.Zero
	if v > minIndexable {
		top := s.index(v)
		for j, c := range s.Counts {
			if s.Offset+int32(j) > top {
				break
			}
			below += c
		}
	}
	return float64(below) / float64(s.N)
}

// Bins calls fn for every non-empty bucket in increasing order with the
// bucket's lower edge, upper edge and count (the zero bucket first, as [0,0]).
func (s *Sketch) Bins(fn func(lo, hi float64, count uint64)) {
	if s.Zero > 0 {
		fn(0, 0, s.Zero)
	}
	for j, c := range s.Counts {
		if c == 0 {
			continue
		}
		i := s.Offset + int32(j)
		fn(math.Exp(float64(i-1)*s.logGamma), math.Exp(float64(i)*s.logGamma), c)
	}
}

// validate checks a sketch read from a record; it also restores derived fields.
func (s *Sketch) validate() error {
	if !(s.Alpha > 0 && s.Alpha < 1) {
		return fmt.Errorf("sketch accuracy %g out of (0,1)", s.Alpha)
	}
	if len(s.Counts) > maxBuckets {
		return errors.New("sketch has too many buckets")
	}
	total := s.Zero
	for _, c := range s.Counts {
		total += c
	}
	if total != s.N {
		return fmt.Errorf("sketch counts add up to %d, not n=%d", total, s.N)
	}
	s.init()
	return nil
}
