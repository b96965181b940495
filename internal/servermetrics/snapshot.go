package servermetrics

import (
	"maps"
	"math"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// maxOtherGauges bounds the gauges listed for an exporter no table knows.
const maxOtherGauges = 64

// snapshot is one scrape reduced to canonical quantities, each summed over
// its series (vLLM's engine label, several models unless one is chosen;
// KV-cache usage is the fullest engine's). A
// quantity the endpoint does not expose is absent from its map: unknown,
// never 0.
type snapshot struct {
	engine   string
	gauges   map[string]float64
	counters map[string]float64
	reasons  map[string]float64 // finished requests by reason
	hists    map[string]*hist
	other    map[string]float64 // an unknown exporter's gauges
	sources  map[string]string  // quantity -> the family read
	// skipped names families not read on purpose (summaries: their quantiles
	// are over the server's lifetime; gauges reset by scraping).
	skipped []string
	// started is the server process's start (process_start_time_seconds, as
	// Prometheus client libraries expose it, in Unix seconds); 0 unknown. A
	// new value is a restart even when its counters have already climbed
	// past the old ones.
	started float64
}

// hist is a histogram's cumulative state: counts[i] observations <= bounds[i]
// (finite bounds, ascending), count all of them, sum their total.
type hist struct {
	bounds []float64
	counts []float64
	count  float64
	sum    float64
}

func (h *hist) clone() *hist {
	return &hist{bounds: h.bounds, counts: append([]float64(nil), h.counts...), count: h.count, sum: h.sum}
}

// reduce maps an exposition's families to a snapshot. model, when set, keeps
// only the series of that served model (and those with no model label).
func reduce(fams map[string]*dto.MetricFamily, model string) *snapshot {
	s := &snapshot{
		gauges: map[string]float64{}, counters: map[string]float64{}, hists: map[string]*hist{},
		sources: map[string]string{},
	}
	s.engine = detectEngine(maps.Keys(fams))
	keep := func(m *dto.Metric) bool { return model == "" || modelOf(m) == "" || modelOf(m) == model }
	for q, cands := range gaugeFamilies {
		for _, c := range cands {
			if f := fams[c.name]; f != nil && (f.GetType() == dto.MetricType_GAUGE || f.GetType() == dto.MetricType_UNTYPED) {
				read := sumScalar
				if q == KVCacheUsage {
					read = maxScalar
				}
				if v, ok := read(f, keep); ok {
					s.gauges[q], s.sources[q] = v, c.name
					break
				}
			}
		}
	}
	for q, cands := range counterFamilies {
		for _, c := range cands {
			f, name := counterFamily(fams, c)
			if f == nil {
				continue
			}
			var v float64
			var ok bool
			if c.fromSum {
				var h *hist
				if h, ok = sumHistogram(f, keep); ok {
					v = h.sum
				}
			} else {
				v, ok = sumScalar(f, keep)
			}
			if !ok {
				continue
			}
			s.counters[q], s.sources[q] = v, name
			if q == RequestsFinished {
				s.reasons = byReason(f, keep)
			}
			break
		}
	}
	for q, cands := range histogramFamilies {
		for _, c := range cands {
			if f := fams[c.name]; f != nil && f.GetType() == dto.MetricType_HISTOGRAM {
				if h, ok := sumHistogram(f, keep); ok {
					s.hists[q], s.sources[q] = h, c.name
					break
				}
			}
		}
	}
	for name, f := range fams {
		switch {
		case f.GetType() == dto.MetricType_SUMMARY:
			s.skipped = append(s.skipped, name+" (summary: lifetime quantiles)")
		case resetOnScrape[name]:
			s.skipped = append(s.skipped, name+" (reset at every scrape: rates come from counter deltas)")
		case s.engine == EngineUnknown && f.GetType() == dto.MetricType_GAUGE:
			if s.other == nil {
				s.other = map[string]float64{}
			}
			if len(s.other) < maxOtherGauges {
				if v, ok := sumScalar(f, keep); ok {
					s.other[name] = v
				}
			}
		}
	}
	if f := fams[processStartFamily]; f != nil {
		if v, ok := maxScalar(f, func(*dto.Metric) bool { return true }); ok && v > 0 {
			s.started = v
		}
	}
	sort.Strings(s.skipped)
	return s
}

// processStartFamily is the process's start time, in Unix seconds.
const processStartFamily = "process_start_time_seconds"

// counterFamily finds a counter with or without "_total" (typed counter, or
// untyped as exporters without TYPE lines give it). A histogram whose name
// ends in _total (vllm:iteration_tokens_total) is never a counter.
func counterFamily(fams map[string]*dto.MetricFamily, c family) (*dto.MetricFamily, string) {
	if c.fromSum {
		if f := fams[c.name]; f != nil && f.GetType() == dto.MetricType_HISTOGRAM {
			return f, c.name + "_sum"
		}
		return nil, ""
	}
	for _, name := range []string{c.name + "_total", c.name} {
		if f := fams[name]; f != nil && (f.GetType() == dto.MetricType_COUNTER || f.GetType() == dto.MetricType_UNTYPED) {
			return f, name
		}
	}
	return nil, ""
}

func modelOf(m *dto.Metric) string {
	for _, lp := range m.GetLabel() {
		for _, l := range modelLabels {
			if lp.GetName() == l {
				return lp.GetValue()
			}
		}
	}
	return ""
}

func labelOf(m *dto.Metric, names []string) string {
	for _, lp := range m.GetLabel() {
		for _, l := range names {
			if lp.GetName() == l {
				return lp.GetValue()
			}
		}
	}
	return ""
}

func scalar(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return math.NaN()
}

// sumScalar adds the family's series; ok is false when none is kept or a
// value is not a number.
func sumScalar(f *dto.MetricFamily, keep func(*dto.Metric) bool) (float64, bool) {
	var sum float64
	n := 0
	for _, m := range f.GetMetric() {
		if !keep(m) {
			continue
		}
		v := scalar(m)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, false
		}
		sum += v
		n++
	}
	return sum, n > 0
}

// maxScalar is the largest of the family's series. KV-cache usage is a
// fraction per engine: a sum over data-parallel engines would exceed 1, and
// the fullest engine is the one that preempts.
func maxScalar(f *dto.MetricFamily, keep func(*dto.Metric) bool) (float64, bool) {
	out := math.Inf(-1)
	for _, m := range f.GetMetric() {
		if !keep(m) {
			continue
		}
		v := scalar(m)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, false
		}
		out = max(out, v)
	}
	return out, !math.IsInf(out, -1)
}

func byReason(f *dto.MetricFamily, keep func(*dto.Metric) bool) map[string]float64 {
	var out map[string]float64
	for _, m := range f.GetMetric() {
		r := labelOf(m, reasonLabels)
		if r == "" || !keep(m) {
			continue
		}
		if out == nil {
			out = map[string]float64{}
		}
		out[strings.ToLower(r)] += scalar(m)
	}
	return out
}

// sumHistogram adds the family's series bucket by bucket. Series whose bounds
// differ from the first one's cannot be added and are left out.
func sumHistogram(f *dto.MetricFamily, keep func(*dto.Metric) bool) (*hist, bool) {
	var h *hist
	for _, m := range f.GetMetric() {
		ph := m.GetHistogram()
		if ph == nil || !keep(m) {
			continue
		}
		var bounds, counts []float64
		for _, b := range ph.GetBucket() {
			if math.IsInf(b.GetUpperBound(), +1) {
				continue
			}
			bounds = append(bounds, b.GetUpperBound())
			counts = append(counts, float64(b.GetCumulativeCount()))
		}
		count := float64(ph.GetSampleCount())
		if h == nil {
			h = &hist{bounds: bounds, counts: counts, count: count, sum: ph.GetSampleSum()}
			continue
		}
		if !sameBounds(h.bounds, bounds) {
			continue
		}
		for i := range counts {
			h.counts[i] += counts[i]
		}
		h.count += count
		h.sum += ph.GetSampleSum()
	}
	return h, h != nil
}

func sameBounds(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
