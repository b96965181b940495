package report

import (
	"encoding/json"
	"errors"
	"fmt"
)

// recordFormatV1 is the record layout written before sketches moved to
// sketches-go: same fields, but each sketch was this module's own bucket array.
const recordFormatV1 = 1

// sketchV1 is a format-1 sketch: bucket i held the values in
// (gamma^(i-1), gamma^i] with gamma = (1+alpha)/(1-alpha), values at or below
// minIndexable were counted apart as zero.
type sketchV1 struct {
	Alpha  float64  `json:"alpha"`
	Zero   uint64   `json:"zero"`
	Offset int32    `json:"offset"`
	Counts []uint64 `json:"counts"`
	N      uint64   `json:"n"`
	Sum    float64  `json:"sum"`
	Min    float64  `json:"min"`
	Max    float64  `json:"max"`
}

// The format-1 record is read through these: the embedded current types carry
// every field, the outer ones shadow the parts whose layout changed.
type (
	recordV1 struct {
		Record
		Categories map[string]*categoryV1 `json:"categories"`
	}
	categoryV1 struct {
		CategoryRecord
		Metrics map[string]*metricV1 `json:"metrics"`
	}
	metricV1 struct {
		MetricRecord
		Sketch *sketchV1 `json:"sketch"`
	}
)

// parseRecordV1 reads a format-1 record and converts its sketches. The
// conversion is exact: sketches-go's logarithmic mapping uses the same gamma,
// and its bucket j, [gamma^j, gamma^(j+1)), is the old bucket j+1 (the two
// differ only on the edges themselves), with the same representative value.
func parseRecordV1(data []byte) (*Record, error) {
	var v1 recordV1
	if err := json.Unmarshal(data, &v1); err != nil {
		return nil, err
	}
	rec := v1.Record
	rec.Categories = make(map[string]*CategoryRecord, len(v1.Categories))
	for cat, c := range v1.Categories {
		if c == nil {
			rec.Categories[cat] = nil // check() names it
			continue
		}
		cr := c.CategoryRecord
		cr.Metrics = make(map[string]*MetricRecord, len(c.Metrics))
		for name, m := range c.Metrics {
			if m == nil || m.Sketch == nil {
				cr.Metrics[name] = nil
				continue
			}
			mr := m.MetricRecord
			s, err := m.Sketch.convert()
			if err != nil {
				return nil, fmt.Errorf("%s/%s: %w", cat, name, err)
			}
			mr.Sketch = s
			cr.Metrics[name] = &mr
		}
		rec.Categories[cat] = &cr
	}
	return &rec, nil
}

func (o *sketchV1) convert() (*Sketch, error) {
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
	s := &Sketch{Alpha: o.Alpha, N: o.N, Sum: o.Sum, Min: o.Min, Max: o.Max, dd: dd, maxIdx: dd.MaxIndexableValue()}
	return s, s.validate()
}
