package runrecord

import (
	"math"

	"github.com/llmstream/xk6-llmstream/internal/quantile"
	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
)

// CI is a percentile's 95 % confidence interval in the record, written
// [lo, hi] beside the figure ("p95_ci"): distribution-free (the calls'
// order statistics, quantile.TwoSided) with the sketch's relative error
// added (sketch.Interval). An end the calls cannot bound is null, and the
// figure is then named in its group's "too_few": a p99 from fewer than 368
// calls keeps its value, but no one should read it as exact.
type CI [2]*float64

// Percentile is what a record says of one percentile of a sketch: its
// interval and whether it rests on too few calls. Nil CI: no call measured it.
func Percentile(s *sketch.Sketch, p float64) (ci *CI, tooFew bool) {
	if s == nil || s.Count() == 0 {
		return nil, false
	}
	b := s.Interval(p, quantile.Confidence)
	return &CI{finitePtr(b.Lo), finitePtr(b.Hi)}, b.TooFew()
}

func finitePtr(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// intervals fills a group's percentile intervals: for each (name, p), *ci
// gets the interval and name joins tooFew when the calls leave an end open.
type intervals struct {
	s      *sketch.Sketch
	tooFew []string
}

func (iv *intervals) set(ci **CI, name string, p float64) {
	c, few := Percentile(iv.s, p)
	*ci = c
	if few {
		iv.tooFew = append(iv.tooFew, name)
	}
}

// WithIntervals fills the metric's p50, p95 and p99 intervals from its sketch.
func (mr *MetricRecord) WithIntervals() *MetricRecord {
	iv := intervals{s: mr.Sketch}
	iv.set(&mr.P50CI, "p50", 0.5)
	iv.set(&mr.P95CI, "p95", 0.95)
	iv.set(&mr.P99CI, "p99", 0.99)
	mr.TooFew = iv.tooFew
	return mr
}

// WithIntervals fills the window's percentile intervals from the sketch
// its percentiles were read from.
func (cp CapacityPercentiles) WithIntervals(s *sketch.Sketch) CapacityPercentiles {
	iv := intervals{s: s}
	iv.set(&cp.P50CI, "p50", 0.5)
	iv.set(&cp.P90CI, "p90", 0.9)
	iv.set(&cp.P95CI, "p95", 0.95)
	iv.set(&cp.P99CI, "p99", 0.99)
	cp.TooFew = iv.tooFew
	return cp
}

// StageIntervals fills a stage's intervals from its TTFT and tokens/s sketches.
func (st *StageRecord) StageIntervals(ttft, tokensPerSec *sketch.Sketch) {
	t := intervals{s: ttft}
	t.set(&st.TTFTP50CI, "ttft_p50", 0.5)
	t.set(&st.TTFTP95CI, "ttft_p95", 0.95)
	tps := intervals{s: tokensPerSec, tooFew: t.tooFew}
	tps.set(&st.TokensPerSecP50CI, "tokens_per_sec_p50", 0.5)
	st.TooFew = tps.tooFew
}

// RouteIntervals fills a route's intervals from its TTFT, E2E and tokens/s sketches.
func (rr *RouteRecord) RouteIntervals(ttft, e2e, tokensPerSec *sketch.Sketch) {
	t := intervals{s: ttft}
	t.set(&rr.TTFTP50CI, "ttft_p50", 0.5)
	t.set(&rr.TTFTP95CI, "ttft_p95", 0.95)
	e := intervals{s: e2e, tooFew: t.tooFew}
	e.set(&rr.E2EP50CI, "e2e_p50", 0.5)
	tps := intervals{s: tokensPerSec, tooFew: e.tooFew}
	tps.set(&rr.TokensPerSecP50CI, "tokens_per_sec_p50", 0.5)
	rr.TooFew = tps.tooFew
}
