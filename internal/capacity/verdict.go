package capacity

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
)

// figureSketches are a window's distributions of every call's figures, ms,
// for the record (its percentiles, and the sketches a merge reads again).
// The verdicts do not read them: they count the calls themselves.
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
		fs.e2e.Add(measure.MS(j.age)) // a lower bound: the call is still running
		return
	}
	fs.calls++
	// A failed call that had its first token waited for it like any other:
	// its TTFT is kept (leaving it out would keep only the calls that
	// completed, and an overload's first failures are its slowest calls).
	// Its TPOT and E2E describe a call cut short, so only errors count it.
	if v, ok := j.f.ttft.MS(); ok {
		fs.ttft.Add(v)
	}
	if !j.f.ok {
		fs.failed++
		return
	}
	if v, ok := j.f.tpot.MS(); ok {
		fs.tpot.Add(v)
	}
	if v, ok := j.f.e2e.MS(); ok {
		fs.e2e.Add(v)
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
		var d measure.Duration
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
		if v, ok := d.MS(); ok && v > o.Limit {
			return false
		}
	}
	return true
}

// judge turns a window into its row at time t, and says whether its
// calls decided it: a window over-saturated (early), or broke an objective
// at Confidence, fails; one that met every objective at Confidence and has
// settled passes; otherwise the calls cannot tell yet.
func (s *Search) judge(w *window, t time.Time, early string) (row runrecord.CapacityWindow, decided bool) {
	all := newFigureSketches()
	calls, _ := w.calls(t)
	var good, outTokens int64
	for _, j := range calls {
		all.add(j)
		if j.f != nil {
			if meets(s.cfg.Objectives, j.f) {
				good++
			}
			outTokens += j.f.outTokens
		}
	}
	row = runrecord.CapacityWindow{Index: w.index, Phase: w.phase, Level: w.level, StartS: s.sec(w.start), EndS: s.sec(t),
		Extended: w.extensions > 0, Settled: true, Calls: all.calls, Failed: all.failed, Censored: all.censored,
		TTFT: percentiles(all.ttft), TPOT: percentiles(all.tpot), E2E: percentiles(all.e2e),
		Sketches: map[string]*sketch.Sketch{"ttft": all.ttft, "tpot": all.tpot, "e2e": all.e2e}}
	from, until := w.measured()
	if early != "" {
		until = t
	}
	if span := until.Sub(from).Seconds(); span > 0 && all.calls > 0 {
		row.Throughput = ptr(float64(all.calls) / span)
		row.Goodput = ptr(float64(good) / span)
		row.GoodputRatio = ptr(float64(good) / float64(all.calls+all.censored))
		row.OutputTokensSec = ptr(float64(outTokens) / span)
	}
	verdicts, leans := s.score(&row, calls)
	w.leansPass = leans
	return row, s.verdict(&row, w, t, early, verdicts)
}

// score fills the margins: every objective bounded on its calls. It returns
// each objective's verdict, in the objectives' order, and whether some are
// undecided and every one of those leans to a pass (bound.leansPass).
func (s *Search) score(row *runrecord.CapacityWindow, calls []judgedCall) (verdicts []string, leans bool) {
	row.Margin = math.Inf(-1)
	undecided, leaning := 0, 0
	verdicts = make([]string, len(s.cfg.Objectives))
	for i, o := range s.cfg.Objectives {
		b := judgeObjective(o, calls, s.cfg.Burstiness())
		verdicts[i] = b.verdict
		if b.verdict == verdictUndecided {
			undecided++
			if b.leansPass {
				leaning++
			}
		}
		m := runrecord.CapacityMargin{Objective: o.Text, Verdict: b.verdict, Calls: b.calls, Censored: b.censored,
			Lower: finitePtr(b.lower), Upper: finitePtr(b.upper), Margin: -1}
		if finite(b.observed) {
			m.Observed, m.Margin = ptr(b.observed), o.margin(b.observed)
		}
		// The margin feeds the isotonic fit of the levels: it agrees with the
		// verdict, which the bounds decided (a figure read from few calls can
		// sit on either side of the limit whatever they prove).
		switch b.verdict {
		case verdictPass:
			m.Margin = min(m.Margin, 0)
		case verdictFail:
			m.Margin = max(m.Margin, 0.01)
		}
		row.Margins = append(row.Margins, m)
		row.Margin = max(row.Margin, m.Margin)
	}
	return verdicts, undecided > 0 && leaning == undecided
}

// verdict decides pass, fail or not yet, and says why; decided is false
// when the calls cannot tell yet (the window goes on, or, at its longest,
// fails as undecided: see undecided).
func (s *Search) verdict(row *runrecord.CapacityWindow, w *window, t time.Time, early string, verdicts []string) (decided bool) {
	var broken, open []string
	for i, v := range verdicts {
		m := row.Margins[i]
		switch v {
		case verdictFail:
			broken = append(broken, m.Objective+" ("+boundText(s.cfg.Objectives[i], m, true)+")")
		case verdictUndecided:
			open = append(open, m.Objective+" ("+boundText(s.cfg.Objectives[i], m, false)+")")
		}
	}
	switch {
	case early != "":
		row.Verdict, row.Reason = "fail", early
		row.EarlyStopS = ptr(t.Sub(w.start).Seconds())
		row.Margin = max(row.Margin, 1)
	case len(broken) > 0:
		row.Verdict, row.Reason = "fail", "broke "+strings.Join(broken, ", ")
		row.Margin = max(row.Margin, 0.01)
	case len(open) > 0:
		row.Verdict, row.Undecided = "fail", true
		row.Reason = "undecided: " + strings.Join(open, ", ")
		row.Margin = max(row.Margin, 0.01)
		return false
	default:
		if un, why := w.unsettled(t, s.cfg.Model == ModelRate, s.ttftLimit); un {
			row.Verdict, row.Reason, row.Settled, row.Undecided = "fail", why, false, true
			row.Margin = max(row.Margin, 0.01)
			return false
		}
		row.Verdict, row.Reason = "pass", "closest to its limit: "+closest(row.Margins)
		if row.Carried = s.carried(w); row.Carried != nil {
			row.Reason += fmt.Sprintf("; its calls came at %.3g req/s, under its level: it passed at that rate", *row.Carried)
		}
		row.Margin = min(row.Margin, 0)
	}
	if math.IsInf(row.Margin, 0) {
		row.Margin = 1
	}
	return true
}

// carried is the rate the open model's calls reached the window's measured
// span at, when it is well under the window's level (nil otherwise, and for
// the closed model). Random arrivals come at their rate only on average:
// over a minute, Poisson arrivals at 16 req/s stray by 3 % (one standard
// deviation), bursty ones of cv 2 by 6 %, and a queue near its capacity
// answers a few percent more load with a much longer p95. A pass whose
// arrivals came more than one such deviation (and more than half the
// precision) under its level speaks for the rate they came at, not for the
// level (levels reads it there: judgedAt).
func (s *Search) carried(w *window) *float64 {
	if s.cfg.Model != ModelRate {
		return nil
	}
	from, until := w.measured()
	n := 0
	for _, c := range w.claims {
		if !c.at.Before(from) && c.at.Before(until) {
			n++
		}
	}
	span := until.Sub(from).Seconds()
	rate := float64(n) / span / s.share
	cv := s.cfg.CV
	if s.cfg.Trace != nil {
		cv = 1 // a trace's bursts are its own: taken as Poisson's
	}
	slack := max(s.cfg.Precision/2, cv/math.Sqrt(max(w.level*s.share*span, 1)))
	if rate >= w.level*(1-slack) {
		return nil
	}
	return &rate
}

// boundText says what decided an objective, or what kept it open: the bound
// against the limit and the calls it rests on.
func boundText(o Objective, m runrecord.CapacityMargin, broke bool) string {
	f := func(v *float64) string {
		if v == nil {
			return "unbounded"
		}
		if o.Figure == FigureErrors {
			return fmt.Sprintf("%.3g%%", 100**v)
		}
		return fmt.Sprintf("%.0f ms", *v)
	}
	limit := fmt.Sprintf("%.0f ms", o.Limit)
	if o.Figure == FigureErrors {
		limit = fmt.Sprintf("%.3g%%", 100*o.Limit)
	}
	calls := fmt.Sprintf("%d calls", m.Calls)
	if m.Censored > 0 {
		calls += fmt.Sprintf(", %d unfinished", m.Censored)
	}
	if broke {
		return fmt.Sprintf("at least %s at %.0f%%, limit %s; %s", f(m.Lower), 100*Confidence, limit, calls)
	}
	return fmt.Sprintf("between %s and %s at %.0f%%, limit %s; %s", f(m.Lower), f(m.Upper), 100*Confidence, limit, calls)
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

// finitePtr is v, or nil when v is not a finite number.
func finitePtr(v float64) *float64 {
	if !finite(v) {
		return nil
	}
	return &v
}
