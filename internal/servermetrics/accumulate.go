package servermetrics

import (
	"maps"
	"slices"
	"sort"
	"strings"
	"time"
)

// point is one successful scrape kept in the history: gauges as read;
// counters and histograms as reset-free running totals, so the delta between
// any two points is one subtraction, exact even after points in between were
// thinned out.
type point struct {
	at       time.Time
	gauges   map[string]float64
	other    map[string]float64
	counters map[string]float64 // canonical counters, and reasonKey(r) for finished requests by reason
	hists    map[string]*hist
	// resets counts, per quantity, the resets seen up to this point: running
	// totals too, so a window knows whether one fell inside it after the
	// points between were thinned out.
	resets map[string]int
	// restarted: the server's process start changed since the point before.
	restarted bool
	// unknown marks the counters that had no value at this scrape (a series
	// that was NaN or ±Inf): their running totals here are the last known
	// ones, so no delta is taken to or from this point. A histogram's own
	// sumUnknown says the same of its sum.
	unknown map[string]bool
}

func reasonKey(r string) string { return RequestsFinished + "/" + r }

// accumulator turns raw cumulative values into running totals that survive
// counter resets (a server restart): when a value goes down, the counter
// started again from 0, so its whole new value is the increase, as
// Prometheus's increase() counts it.
type accumulator struct {
	lastCounters map[string]float64
	lastHists    map[string]*hist
	counters     map[string]float64
	hists        map[string]*hist
	resets       map[string]int
	lastStarted  float64 // the server process's start at the previous scrape; 0 unknown
}

func newAccumulator() *accumulator {
	return &accumulator{
		lastCounters: map[string]float64{}, lastHists: map[string]*hist{},
		counters: map[string]float64{}, hists: map[string]*hist{}, resets: map[string]int{},
	}
}

// add folds s in and returns its point and the quantities that reset.
func (a *accumulator) add(at time.Time, s *snapshot) (*point, []string) {
	var resets []string
	// A new process start is a restart: every counter began again from 0,
	// even one that has already climbed past its old value.
	restarted := s.started != 0 && a.lastStarted != 0 && s.started != a.lastStarted
	if s.started != 0 {
		a.lastStarted = s.started
	}
	raw := make(map[string]float64, len(s.counters)+len(s.reasons))
	for k, v := range s.counters {
		raw[k] = v
	}
	for r, v := range s.reasons {
		raw[reasonKey(r)] = v
	}
	for k, v := range raw {
		prev, seen := a.lastCounters[k]
		inc := v // a series first seen started at 0
		if seen {
			inc = v - prev
			if inc < 0 || restarted {
				inc = v
				resets = append(resets, k)
			}
		}
		a.counters[k] += inc
		a.lastCounters[k] = v
	}
	for k, h := range s.hists {
		prev := a.lastHists[k]
		inc, reset := h, false
		if prev != nil {
			if d, ok := histDiff(h, prev); ok && !restarted {
				inc = d
			} else {
				reset = true
				resets = append(resets, k)
			}
		}
		if h.sumUnknown {
			// This scrape adds nothing to the sum, and the last known sum (0
			// after a reset: the server began again) stays the base of the
			// next increase, which then covers this scrape's share too.
			inc = inc.clone()
			inc.sum, inc.sumUnknown = 0, false
			base := h.clone()
			base.sum, base.sumUnknown = 0, false
			if prev != nil && !reset {
				base.sum = prev.sum
			}
			h = base
		}
		if acc := a.hists[k]; acc != nil && sameBounds(acc.bounds, inc.bounds) {
			for i := range inc.counts {
				acc.counts[i] += inc.counts[i]
			}
			acc.count += inc.count
			acc.sum += inc.sum
		} else {
			a.hists[k] = inc.clone()
		}
		a.lastHists[k] = h
	}
	// A reason's series resets with the total: both are the finished
	// count's, named once.
	for i, k := range resets {
		if strings.HasPrefix(k, RequestsFinished+"/") {
			resets[i] = RequestsFinished
		}
	}
	sort.Strings(resets)
	resets = slices.Compact(resets)
	for _, k := range resets {
		a.resets[k]++
	}
	p := &point{
		at: at, gauges: s.gauges, other: s.other,
		counters: make(map[string]float64, len(a.counters)), hists: make(map[string]*hist, len(a.hists)),
		resets: maps.Clone(a.resets), restarted: restarted, unknown: s.unknown,
	}
	for k, v := range a.counters {
		p.counters[k] = v
	}
	for k, h := range a.hists {
		p.hists[k] = h.clone()
		p.hists[k].sumUnknown = false
	}
	for k, h := range s.hists {
		if h.sumUnknown {
			p.hists[k].sumUnknown = true
		}
	}
	return p, resets
}

// histDiff is cur − prev, or false when the histogram reset (a count went
// down) or its buckets changed.
func histDiff(cur, prev *hist) (*hist, bool) {
	if !sameBounds(cur.bounds, prev.bounds) || cur.count < prev.count {
		return nil, false
	}
	d := &hist{bounds: cur.bounds, counts: make([]float64, len(cur.counts)), count: cur.count - prev.count, sum: cur.sum - prev.sum,
		sumUnknown: cur.sumUnknown || prev.sumUnknown}
	for i := range cur.counts {
		d.counts[i] = cur.counts[i] - prev.counts[i]
		if d.counts[i] < 0 {
			return nil, false
		}
	}
	return d, true
}

// history keeps at most maxPoints points: when full, every other point but
// the first (the baseline) and the last is dropped, so memory stays bounded
// over hours while the time resolution halves. Deltas stay exact (points
// hold running totals); gauge statistics become those of the points kept.
type history struct {
	max    int
	points []*point
}

func (h *history) add(p *point) {
	if len(h.points) >= h.max {
		kept := h.points[:1]
		for i := 1; i < len(h.points)-1; i += 2 {
			kept = append(kept, h.points[i])
		}
		kept = append(kept, h.points[len(h.points)-1])
		clear(h.points[len(kept):])
		h.points = kept
	}
	h.points = append(h.points, p)
}
