package servermetrics

import (
	"maps"
	"math"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"

	"github.com/llmstream/xk6-llmstream/internal/energy"
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
	// bad names the series that were NaN or ±Inf; unknown marks the counters
	// (and reasonKey(r) of finished requests) they left without a value at
	// this scrape, so that no delta is taken to or from it. A histogram
	// whose sum was not finite says so itself (hist.sumUnknown).
	bad     nonFinite
	unknown map[string]bool
	// gpus are a GPU exporter's readings (dcgm.go), gpuInfo their labels;
	// hasGPU says the exposition has the families at all.
	gpus    []energy.Reading
	gpuInfo []GPU
	hasGPU  bool
	// config is the server's configuration labels (serverconfig.go).
	config map[string]string
}

// hist is a histogram's cumulative state: counts[i] observations <= bounds[i]
// (finite bounds, ascending), count all of them, sum their total.
// sumUnknown: a series' sum was not finite, so sum is not the total (the
// buckets and count still are).
type hist struct {
	bounds     []float64
	counts     []float64
	count      float64
	sum        float64
	sumUnknown bool
}

func (h *hist) clone() *hist {
	return &hist{bounds: h.bounds, counts: append([]float64(nil), h.counts...), count: h.count, sum: h.sum, sumUnknown: h.sumUnknown}
}

// markUnknown says counter q had no value at this scrape.
func (s *snapshot) markUnknown(q string) {
	if s.unknown == nil {
		s.unknown = map[string]bool{}
	}
	s.unknown[q] = true
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
				if v, ok := read(f, keep, &s.bad); ok {
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
				if h, ok = sumHistogram(f, keep, &s.bad); ok {
					v, ok = h.sum, !h.sumUnknown
				}
			} else {
				v, ok = sumScalar(f, keep, &s.bad)
			}
			if !ok {
				if s.bad.in(f.GetName()) {
					s.markUnknown(q)
				}
				continue
			}
			delete(s.unknown, q) // a later candidate read it
			s.counters[q], s.sources[q] = v, name
			if q == RequestsFinished {
				var unknown []string
				s.reasons, unknown = byReason(f, keep, &s.bad)
				for _, r := range unknown {
					s.markUnknown(reasonKey(r))
				}
			}
			break
		}
	}
	for q, cands := range histogramFamilies {
		for _, c := range cands {
			if f := fams[c.name]; f != nil && f.GetType() == dto.MetricType_HISTOGRAM {
				if h, ok := sumHistogram(f, keep, &s.bad); ok {
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
		case (s.engine == EngineUnknown || s.engine == EngineDCGM) && f.GetType() == dto.MetricType_GAUGE && name != dcgmPower && name != dcgmEnergy:
			if s.other == nil {
				s.other = map[string]float64{}
			}
			if len(s.other) < maxOtherGauges {
				if v, ok := sumScalar(f, keep, &s.bad); ok {
					s.other[name] = v
				}
			}
		}
	}
	specPositions(fams, keep, s)
	s.config = serverConfig(fams)
	if s.gpus, s.gpuInfo, s.hasGPU = gpuReadings(fams, &s.bad); s.hasGPU {
		if p, ok := powerSum(s.gpus); ok {
			s.gauges[GPUPower], s.sources[GPUPower] = p, dcgmPower
		}
		s.sources[Energy] = dcgmPower + " (integrated)"
		for _, r := range s.gpus {
			if finite(r.EnergyMJ) {
				s.sources[Energy] = dcgmEnergy
				break
			}
		}
	}
	if f := fams[processStartFamily]; f != nil {
		if v, ok := maxScalar(f, func(*dto.Metric) bool { return true }, &s.bad); ok && v > 0 {
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
// value is not a finite number (noted in bad): a sum without one of its
// series would be a wrong figure, not a smaller one.
func sumScalar(f *dto.MetricFamily, keep func(*dto.Metric) bool, bad *nonFinite) (float64, bool) {
	var sum float64
	n := 0
	for _, m := range f.GetMetric() {
		if !keep(m) {
			continue
		}
		v := scalar(m)
		if bad.note(f.GetName(), "", m, v) {
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
func maxScalar(f *dto.MetricFamily, keep func(*dto.Metric) bool, bad *nonFinite) (float64, bool) {
	out := math.Inf(-1)
	for _, m := range f.GetMetric() {
		if !keep(m) {
			continue
		}
		v := scalar(m)
		if bad.note(f.GetName(), "", m, v) {
			return 0, false
		}
		out = max(out, v)
	}
	return out, !math.IsInf(out, -1)
}

// byReason adds the finished requests by reason; a reason with a series
// that is not a finite number is left out and returned in unknown.
func byReason(f *dto.MetricFamily, keep func(*dto.Metric) bool, bad *nonFinite) (out map[string]float64, unknown []string) {
	var lost map[string]bool
	for _, m := range f.GetMetric() {
		r := labelOf(m, reasonLabels)
		if r == "" || !keep(m) {
			continue
		}
		r = strings.ToLower(r)
		if v := scalar(m); bad.note(f.GetName(), "", m, v) {
			if lost == nil {
				lost = map[string]bool{}
			}
			lost[r] = true
		} else {
			if out == nil {
				out = map[string]float64{}
			}
			out[r] += v
		}
	}
	for r := range lost {
		delete(out, r)
		unknown = append(unknown, r)
	}
	sort.Strings(unknown)
	return out, unknown
}

// sumHistogram adds the family's series bucket by bucket. Series whose bounds
// differ from the first one's cannot be added and are left out. A series
// whose sum is not a finite number (noted in bad) leaves the sum unknown;
// its buckets and count, integers, still add up.
func sumHistogram(f *dto.MetricFamily, keep func(*dto.Metric) bool, bad *nonFinite) (*hist, bool) {
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
		sum := ph.GetSampleSum()
		if h == nil {
			h = &hist{bounds: bounds, counts: counts, count: count}
		} else {
			if !sameBounds(h.bounds, bounds) {
				continue
			}
			for i := range counts {
				h.counts[i] += counts[i]
			}
			h.count += count
		}
		if bad.note(f.GetName(), "_sum", m, sum) {
			h.sumUnknown = true
		} else {
			h.sum += sum
		}
	}
	if h != nil && h.sumUnknown {
		h.sum = 0 // not a total: no figure may be made of it
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
