package servermetrics

import (
	"math"
	"sort"
	"strings"
	"time"
)

// Window is what the server counted between two scrapes: the run's baseline
// and final snapshots, or the scrapes nearest a stage's boundaries. A
// quantity the endpoint does not expose is absent from its map (unknown);
// one it exposes and that did not move is there with 0.
type Window struct {
	Name string `json:"name,omitempty"`
	// From and To are the scrapes the deltas are taken between (a stage's
	// requested boundaries fall between scrapes; these are the truth).
	From    time.Time `json:"from"`
	To      time.Time `json:"to"`
	Scrapes int       `json:"scrapes"` // scrapes in [From, To] the gauge statistics come from

	Counters         map[string]float64    `json:"counters,omitempty"`
	FinishedByReason map[string]float64    `json:"finished_by_reason,omitempty"`
	Histograms       map[string]HistStats  `json:"histograms,omitempty"`
	Gauges           map[string]GaugeStats `json:"gauges,omitempty"`
	// OtherGauges are an unknown exporter's gauges, listed as found.
	OtherGauges map[string]GaugeStats `json:"other_gauges,omitempty"`
	// PrefixHitRatio = Δhits / Δqueries, in prompt tokens; nil when either
	// is unknown or nothing was looked up.
	PrefixHitRatio *float64 `json:"prefix_hit_ratio,omitempty"`
	// Resets counts, per quantity, the times it began again from 0 inside
	// the window (a server restart). Its delta then sums the pieces between
	// scrapes, and misses what the server counted between the last scrape
	// before the restart and the restart: a lower bound, not a count.
	Resets map[string]int `json:"resets,omitempty"`
	// Energy is what a GPU exporter's GPUs used over the window (dcgm.go).
	Energy *EnergyStats `json:"energy,omitempty"`
	// SpecDecode is speculative decoding's acceptance (specdecode.go).
	SpecDecode *SpecDecode `json:"spec_decode,omitempty"`
}

// HistStats is a histogram's delta over a window. Mean = Δsum/Δcount is
// exact whatever the buckets; the quantiles are estimates by linear
// interpolation inside the bucket that holds them, and say that bucket.
type HistStats struct {
	Count float64 `json:"count"`
	// Sum is null when unknown: a series' sum was not a finite number at
	// either end of the window.
	Sum  *float64  `json:"sum"`
	Mean *float64  `json:"mean,omitempty"` // nil when Count is 0 or Sum unknown
	P50  *Estimate `json:"p50,omitempty"`
	P90  *Estimate `json:"p90,omitempty"`
	P99  *Estimate `json:"p99,omitempty"`
}

// Estimate is a quantile read from bucket counts: somewhere in (Lo, Hi],
// Value by interpolation. Hi is nil for the +Inf bucket (then Value = Lo,
// a lower bound only).
type Estimate struct {
	Value float64  `json:"value"`
	Lo    float64  `json:"lo"`
	Hi    *float64 `json:"hi,omitempty"`
}

// String writes the estimate with the bucket bounds that limit it.
func (e Estimate) String() string {
	if e.Hi == nil {
		return "> " + fmtFloat(e.Lo) + " (last bucket)"
	}
	return "≈ " + fmtFloat(e.Value) + " (bucket " + fmtFloat(e.Lo) + "–" + fmtFloat(*e.Hi) + ")"
}

// GaugeStats summarises a gauge's samples, one per scrape.
type GaugeStats struct {
	Samples int     `json:"samples"`
	Mean    float64 `json:"mean"`
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
	P50     float64 `json:"p50"`
	P95     float64 `json:"p95"`
	// AboveZero is the share of samples above 0 (waiting > 0 for how much of
	// the time).
	AboveZero float64 `json:"above_zero"`
}

// window computes the deltas between the points nearest from and to (zero
// times mean the history's ends).
func (h *history) window(name string, from, to time.Time) (Window, bool) {
	if len(h.points) == 0 {
		return Window{Name: name}, false
	}
	a, b := h.points[0], h.points[len(h.points)-1]
	if !from.IsZero() {
		a = h.points[h.atOrBefore(from)]
	}
	if !to.IsZero() {
		b = h.points[h.atOrAfter(to)]
	}
	w := Window{Name: name, From: a.at, To: b.at}
	for k, v := range b.counters {
		if a.unknown[k] || b.unknown[k] {
			continue // a series was not a number at an end: the delta is unknown
		}
		d := v - a.counters[k] // absent at a: the series was created after it, from 0
		if r, ok := strings.CutPrefix(k, RequestsFinished+"/"); ok {
			if w.FinishedByReason == nil {
				w.FinishedByReason = map[string]float64{}
			}
			w.FinishedByReason[r] = d
			continue
		}
		if w.Counters == nil {
			w.Counters = map[string]float64{}
		}
		w.Counters[k] = d
	}
	for k, hb := range b.hists {
		d := hb
		if ha := a.hists[k]; ha != nil {
			var ok bool
			if d, ok = histDiff(hb, ha); !ok {
				continue
			}
		}
		if w.Histograms == nil {
			w.Histograms = map[string]HistStats{}
		}
		w.Histograms[k] = histStats(d)
	}
	for k, n := range b.resets {
		if d := n - a.resets[k]; d > 0 {
			if w.Resets == nil {
				w.Resets = map[string]int{}
			}
			w.Resets[k] = d
		}
	}
	w.SpecDecode = specDecode(&w)
	q, hq := w.Counters[PrefixQueries]
	hits, hh := w.Counters[PrefixHits]
	if hq && hh && q > 0 {
		r := hits / q
		w.PrefixHitRatio = &r
	}
	gauges := map[string][]float64{}
	others := map[string][]float64{}
	for _, p := range h.points {
		if p.at.Before(a.at) || p.at.After(b.at) {
			continue
		}
		w.Scrapes++
		for k, v := range p.gauges {
			gauges[k] = append(gauges[k], v)
		}
		for k, v := range p.other {
			others[k] = append(others[k], v)
		}
	}
	w.Gauges = gaugeStatsOf(gauges)
	w.OtherGauges = gaugeStatsOf(others)
	return w, true
}

// atOrBefore is the index of the last point at or before t (the first point
// when all are after it).
func (h *history) atOrBefore(t time.Time) int {
	i := sort.Search(len(h.points), func(i int) bool { return h.points[i].at.After(t) })
	return max(i-1, 0)
}

// atOrAfter is the index of the first point at or after t (the last point
// when all are before it).
func (h *history) atOrAfter(t time.Time) int {
	i := sort.Search(len(h.points), func(i int) bool { return !h.points[i].at.Before(t) })
	return min(i, len(h.points)-1)
}

func gaugeStatsOf(samples map[string][]float64) map[string]GaugeStats {
	if len(samples) == 0 {
		return nil
	}
	out := make(map[string]GaugeStats, len(samples))
	for k, vs := range samples {
		out[k] = gaugeStats(vs)
	}
	return out
}

func gaugeStats(vs []float64) GaugeStats {
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	g := GaugeStats{Samples: len(s), Min: s[0], Max: s[len(s)-1]}
	var sum float64
	above := 0
	for _, v := range s {
		sum += v
		if v > 0 {
			above++
		}
	}
	g.Mean = sum / float64(len(s))
	g.AboveZero = float64(above) / float64(len(s))
	g.P50 = nearestRank(s, 0.50)
	g.P95 = nearestRank(s, 0.95)
	return g
}

func nearestRank(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func histStats(d *hist) HistStats {
	s := HistStats{Count: d.count}
	if !d.sumUnknown {
		sum := d.sum
		s.Sum = &sum
	}
	if d.count <= 0 {
		return s
	}
	if s.Sum != nil {
		m := d.sum / d.count
		s.Mean = &m
	}
	s.P50, s.P90, s.P99 = quantile(d, 0.50), quantile(d, 0.90), quantile(d, 0.99)
	return s
}

// quantile interpolates linearly inside the bucket holding rank q·count, as
// Prometheus's histogram_quantile does; the first bucket's lower bound is 0
// (durations and token counts are not negative).
func quantile(d *hist, q float64) *Estimate {
	rank := q * d.count
	lo, below := 0.0, 0.0
	for i, ub := range d.bounds {
		c := d.counts[i]
		if c >= rank && c > below {
			v := lo + (ub-lo)*(rank-below)/(c-below)
			hi := ub
			return &Estimate{Value: v, Lo: lo, Hi: &hi}
		}
		lo, below = ub, c
	}
	return &Estimate{Value: lo, Lo: lo}
}
