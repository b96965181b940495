package llmstream

// The metric registry: every llm_* metric of the figure table
// (internal/record), registered with k6 under its kind and unit. The samples
// of a call are built in samples.go.

import (
	"fmt"

	"go.k6.io/k6/metrics"

	"github.com/llmstream/xk6-llmstream/internal/record"
)

// llmMetrics holds every llm_* metric (docs/metrics.md lists them), by the
// index of its figure in record.Figures (nil for figures k6 gets nothing
// of). They are registered eagerly, in the init context, so that thresholds
// naming them validate before the test starts.
type llmMetrics struct {
	byFigure []*metrics.Metric
	n        int // how many figures have a metric
}

var metricKinds = map[record.Kind]metrics.MetricType{ //nolint:gochecknoglobals // read-only table
	record.Trend: metrics.Trend, record.Counter: metrics.Counter, record.Rate: metrics.Rate,
}

func registerMetrics(reg *metrics.Registry) (*llmMetrics, error) {
	m := &llmMetrics{byFigure: make([]*metrics.Metric, len(record.Figures))}
	for i, f := range record.Figures {
		if f.Metric == "" {
			continue
		}
		vt := metrics.Default
		if f.Unit == record.Duration {
			vt = metrics.Time
		}
		metric, err := reg.NewMetric(f.Metric, metricKinds[f.Kind], vt)
		if err != nil {
			return nil, fmt.Errorf("registering %s: %w", f.Metric, err)
		}
		m.byFigure[i] = metric
		m.n++
	}
	return m, nil
}
