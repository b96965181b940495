package report

import (
	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
)

// mergeSketch adds s into *into (a clone of s when *into is nil).
func mergeSketch(into **sketch.Sketch, s *sketch.Sketch) error {
	if *into == nil {
		*into = s.Clone()
		return nil
	}
	return (*into).Merge(s)
}
