package capacity

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
)

// figureSketches are one client's (or every call's) distributions in a
// window, ms.
type figureSketches struct {
	ttft, tpot, e2e *sketch.Sketch
	calls, failed   int
	censored        int
}

func newFigureSketches() *figureSketches {
	return &figureSketches{ttft: sketch.New(sketch.FineAlpha), tpot: sketch.New(sketch.FineAlpha),
		e2e: sketch.New(sketch.FineAlpha)}
}

func (fs *figureSketches) add(j judgedCall) {
	if j.f == nil {
		fs.censored++
		fs.e2e.Add(ms(j.ageAtEnd)) // a lower bound: the call is still running
		return
	}
	fs.calls++
	if !j.f.ok {
		fs.failed++
		return // a failed call's timings say nothing about the service's speed; it counts as an error
	}
	if j.f.ttft >= 0 {
		fs.ttft.Add(ms(j.f.ttft))
	}
	if j.f.tpot >= 0 {
		fs.tpot.Add(ms(j.f.tpot))
	}
	if j.f.e2e >= 0 {
		fs.e2e.Add(ms(j.f.e2e))
	}
}

// observed is an objective's figure in these sketches (NaN: not measured).
func (fs *figureSketches) observed(o Objective) float64 {
	switch o.Figure {
	case FigureErrors:
		if fs.calls == 0 {
			return math.NaN()
		}
		return float64(fs.failed) / float64(fs.calls)
	case FigureTTFT:
		return fs.ttft.Quantile(o.Quantile)
	case FigureTPOT:
		return fs.tpot.Quantile(o.Quantile)
	default:
		return fs.e2e.Quantile(o.Quantile)
	}
}

// meets says whether one call met every objective that applies to it, each
// percentile objective read as a per-call limit: the call counts as goodput.
func meets(objs []Objective, f *finished) bool {
	if !f.ok {
		return false
	}
	for _, o := range objs {
		if o.Client != "" && o.Client != f.client {
			continue
		}
		var d time.Duration
		switch o.Figure {
		case FigureTTFT:
			d = f.ttft
		case FigureTPOT:
			d = f.tpot
		case FigureE2E:
			d = f.e2e
		default:
			continue
		}
		if d >= 0 && ms(d) > o.Limit {
			return false
		}
	}
	return true
}

// minCalls is the fewest measured calls a window is judged on. A
// percentile of fewer calls is their slowest one, which judges
// conservatively; fewer still is no measurement (the window is lengthened,
// then fails as not settled).
const minCalls = 8

// judge turns a window into its row at time t. It returns the row and the
// window's margin (clipped, for the isotonic fit).
func (s *Search) judge(w *window, t time.Time, early string) runrecord.CapacityWindow {
	all, per := newFigureSketches(), map[string]*figureSketches{}
	calls := w.calls(t)
	var good, outTokens int64
	for _, j := range calls {
		all.add(j)
		if j.f != nil {
			if per[j.f.client] == nil {
				per[j.f.client] = newFigureSketches()
			}
			per[j.f.client].add(j)
			if meets(s.cfg.Objectives, j.f) {
				good++
			}
			outTokens += j.f.outTokens
		}
	}
	row := runrecord.CapacityWindow{Index: w.index, Phase: w.phase, Level: w.level, StartS: s.sec(w.start), EndS: s.sec(t),
		Extended: w.extensions > 0, Settled: true, Calls: all.calls, Failed: all.failed, Censored: all.censored,
		TTFT: percentiles(all.ttft), TPOT: percentiles(all.tpot), E2E: percentiles(all.e2e),
		Sketches: map[string]*sketch.Sketch{"ttft": all.ttft, "tpot": all.tpot, "e2e": all.e2e}}
	from, until := w.measured(t)
	if span := until.Sub(from).Seconds(); span > 0 && all.calls > 0 {
		row.Throughput = ptr(float64(all.calls) / span)
		row.Goodput = ptr(float64(good) / span)
		row.GoodputRatio = ptr(float64(good) / float64(all.calls+all.censored))
		row.OutputTokensSec = ptr(float64(outTokens) / span)
	}
	s.score(&row, all, per)
	s.verdict(&row, w, t, early, all)
	return row
}

// score fills the margins: every objective on its client's calls.
func (s *Search) score(row *runrecord.CapacityWindow, all *figureSketches, per map[string]*figureSketches) {
	row.Margin = math.Inf(-1)
	for _, o := range s.cfg.Objectives {
		fs := all
		if o.Client != "" {
			fs = per[o.Client]
			if fs == nil {
				fs = newFigureSketches()
			}
		}
		// Not measured is not judged, except an E2E whose calls are all
		// still running: they are the slow ones.
		m := runrecord.CapacityMargin{Objective: o.Text, Margin: -1}
		if v := fs.observed(o); finite(v) {
			m.Observed, m.Margin = ptr(v), o.margin(v)
		} else if o.Figure == FigureE2E && fs.censored > 0 {
			m.Margin = 1
		}
		// A TTFT or TPOT percentile whose rank falls among the calls still
		// running is not known to be met: they are slower than every call
		// that ended. (E2E has their ages, as lower bounds, in its sketch.)
		n := fs.calls + fs.censored
		if o.Figure != FigureE2E && o.Quantile > 0 && n > 0 && float64(fs.censored) > (1-o.Quantile)*float64(n) {
			m.Margin = max(m.Margin, 1)
		}
		row.Margins = append(row.Margins, m)
		row.Margin = max(row.Margin, m.Margin)
	}
}

// verdict decides pass or fail and says why.
func (s *Search) verdict(row *runrecord.CapacityWindow, w *window, t time.Time, early string, all *figureSketches) {
	var broken []string
	for _, m := range row.Margins {
		if m.Margin > 0 {
			broken = append(broken, m.Objective)
		}
	}
	switch {
	case early != "":
		row.Verdict, row.Reason = "fail", early
		row.EarlyStopS = ptr(t.Sub(w.start).Seconds())
		row.Margin = max(row.Margin, 1)
	case all.calls+all.censored < minCalls:
		row.Verdict, row.Settled = "fail", false
		row.Reason = fmt.Sprintf("not settled: %d measured calls, fewer than the %d the objectives need (lengthen the window)",
			all.calls+all.censored, minCalls)
		row.Margin = max(row.Margin, 1)
	case len(broken) > 0:
		row.Verdict, row.Reason = "fail", "broke "+strings.Join(broken, ", ")
	default:
		if un, why := w.unsettled(t, s.cfg.Model == ModelRate, s.ttftLimit); un {
			row.Verdict, row.Reason, row.Settled = "fail", why, false
			row.Margin = max(row.Margin, 0.01)
			return
		}
		row.Verdict, row.Reason = "pass", "closest to its limit: "+closest(row.Margins)
	}
	if math.IsInf(row.Margin, 0) {
		row.Margin = 1
	}
}

// closest is the objective with the largest margin.
func closest(ms []runrecord.CapacityMargin) string {
	sorted := append([]runrecord.CapacityMargin(nil), ms...)
	sort.SliceStable(sorted, func(a, b int) bool { return sorted[a].Margin > sorted[b].Margin })
	if len(sorted) == 0 {
		return ""
	}
	return sorted[0].Objective
}

func percentiles(sk *sketch.Sketch) runrecord.CapacityPercentiles {
	q := func(p float64) *float64 {
		if v := sk.Quantile(p); finite(v) {
			return &v
		}
		return nil
	}
	return runrecord.CapacityPercentiles{P50: q(0.5), P90: q(0.9), P95: q(0.95), P99: q(0.99)}.WithIntervals(sk)
}

func ptr(v float64) *float64 { return &v }
