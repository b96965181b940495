package k6env

// The metric registry: every llm_* metric of the figure tables
// (internal/record: a chat call's, an embed or rerank call's, a job's),
// registered with k6 under its kind and unit. The samples are built in
// binding/calls/samples.go.

import (
	"fmt"
	"sync"
	"sync/atomic"

	"go.k6.io/k6/metrics"

	"github.com/llmstream/xk6-llmstream/internal/record"
)

// llmMetrics holds every llm_* metric (docs/metrics.md lists them), by the
// index of its figure in record.Figures (nil for figures k6 gets nothing
// of). They are registered eagerly, in the init context, so that thresholds
// naming them validate before the test starts.
type LLMMetrics struct {
	byFigure []*metrics.Metric
	// byRetrieval is the same for record.RetrievalFigures (a metric both
	// tables have is one k6 metric).
	byRetrieval []*metrics.Metric
	// byJob are record.JobFigures' metrics, by row.
	ByJob []*metrics.Metric
	// lastFixed and lastFixedRetrieval are how many samples the last
	// call's batch of each table held besides its gaps and attempts
	// (before the first call: how many of its figures have a metric).
	lastFixed, lastFixedRetrieval atomic.Int32
}

// Table is the figure table of a call, its metrics by row and how many
// samples besides its gaps and attempts the last call of the table had
// (before the first call: every figure with a metric), which sizes the
// next batch: a table has a metric for every figure a call could have,
// and a call has about half of them.
func (m *LLMMetrics) Table(rec *record.Call) ([]record.Figure[record.Call], []*metrics.Metric, *atomic.Int32) {
	if rec.Retrieval != nil {
		return record.RetrievalFigures, m.byRetrieval, &m.lastFixedRetrieval
	}
	return record.Figures, m.byFigure, &m.lastFixed
}

var metricKinds = map[record.Kind]metrics.MetricType{ //nolint:gochecknoglobals // read-only table
	record.Trend: metrics.Trend, record.Counter: metrics.Counter, record.Rate: metrics.Rate,
}

// metricTables is the process's llmMetrics, made once per k6 registry (a
// test run has one) and shared by every VU: the metrics are the same ones,
// and a copy per VU would cost each VU a slice per figure table.
type MetricTables struct {
	mu  sync.Mutex
	reg *metrics.Registry
	m   *LLMMetrics
}

func (t *MetricTables) Get(reg *metrics.Registry) (*LLMMetrics, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m != nil && t.reg == reg {
		return t.m, nil
	}
	m, err := registerMetrics(reg)
	if err != nil {
		return nil, err
	}
	t.reg, t.m = reg, m
	return m, nil
}

func registerMetrics(reg *metrics.Registry) (*LLMMetrics, error) {
	m := &LLMMetrics{}
	var err error
	var n, nRetrieval int
	if m.byFigure, n, err = registerTable(reg, record.Figures); err != nil {
		return nil, err
	}
	if m.byRetrieval, nRetrieval, err = registerTable(reg, record.RetrievalFigures); err != nil {
		return nil, err
	}
	if m.ByJob, _, err = registerTable(reg, record.JobFigures); err != nil {
		return nil, err
	}
	m.lastFixed.Store(int32(n))                   // #nosec G115 -- a table's row count fits
	m.lastFixedRetrieval.Store(int32(nRetrieval)) // #nosec G115 -- a table's row count fits
	return m, nil
}

// registerTable registers the metrics of one figure table: k6's registry
// hands back the metric a row of another table registered already.
func registerTable[R any](reg *metrics.Registry, table []record.Figure[R]) ([]*metrics.Metric, int, error) {
	by, n := make([]*metrics.Metric, len(table)), 0
	for i, f := range table {
		if f.Metric == "" {
			continue
		}
		metric, err := figureMetric(reg, f.Metric, f.Kind, f.Unit)
		if err != nil {
			return nil, 0, err
		}
		by[i] = metric
		n++
	}
	return by, n, nil
}

// figureMetric registers one figure's metric; a duration is a time metric,
// so k6 formats it (and its thresholds) as a time.
func figureMetric(reg *metrics.Registry, name string, kind record.Kind, unit record.Unit) (*metrics.Metric, error) {
	vt := metrics.Default
	if unit == record.Duration {
		vt = metrics.Time
	}
	metric, err := reg.NewMetric(name, metricKinds[kind], vt)
	if err != nil {
		return nil, fmt.Errorf("registering %s: %w", name, err)
	}
	return metric, nil
}

// metricNamed is the k6 metric of the figure table's row named name (nil
// when no row is).
func (m *LLMMetrics) MetricNamed(name string) *metrics.Metric {
	for _, metric := range m.byFigure {
		if metric != nil && metric.Name == name {
			return metric
		}
	}
	return nil
}
