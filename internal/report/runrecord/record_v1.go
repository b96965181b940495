package runrecord

import (
	"encoding/json"
	"fmt"

	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
)

// recordFormatV1 is the record layout written before sketches moved to
// sketches-go: same fields, but each sketch was this module's own bucket array.
const recordFormatV1 = 1

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
		Sketch *sketch.V1 `json:"sketch"`
	}
)

// parseRecordV1 reads a format-1 record and converts its sketches
// (sketch.V1).
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
			s, err := m.Sketch.Convert()
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
