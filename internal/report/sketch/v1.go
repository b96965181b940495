package sketch

import (
	"errors"
	"fmt"
)

// V1 is a sketch as format-1 run records stored it, the module's own bucket
// array before sketches moved to sketches-go: bucket i held the values in
// (gamma^(i-1), gamma^i] with gamma = (1+alpha)/(1-alpha), values at or below
// minIndexable were counted apart as zero.
type V1 struct {
	Alpha  float64  `json:"alpha"`
	Zero   uint64   `json:"zero"`
	Offset int32    `json:"offset"`
	Counts []uint64 `json:"counts"`
	N      uint64   `json:"n"`
	Sum    float64  `json:"sum"`
	Min    float64  `json:"min"`
	Max    float64  `json:"max"`
}

// Convert turns a format-1 sketch into a Sketch. The conversion is exact:
// sketches-go's logarithmic mapping uses the same gamma, and its bucket j,
// [gamma^j, gamma^(j+1)), is the old bucket j+1 (the two differ only on the
// edges themselves), with the same representative value.
func (o *V1) Convert() (*Sketch, error) {
	if !(o.Alpha > 0 && o.Alpha < 1) {
		return nil, fmt.Errorf("sketch accuracy %g out of (0,1)", o.Alpha)
	}
	if len(o.Counts) > maxBuckets {
		return nil, errors.New("sketch has too many buckets")
	}
	dd, err := newDD(o.Alpha)
	if err != nil {
		return nil, err
	}
	if o.Zero > 0 {
		_ = dd.AddWithCount(0, float64(o.Zero))
	}
	pos := dd.GetPositiveValueStore()
	for j, c := range o.Counts {
		if c > 0 {
			pos.AddWithCount(int(o.Offset)+j-1, float64(c))
		}
	}
	s := &Sketch{Alpha: o.Alpha, N: o.N, Sum: o.Sum, Min: o.Min, Max: o.Max}
	s.bind(dd)
	return s, s.Validate()
}
