package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
)

// MergeCapacity combines the capacity sections of several instances of one
// test (execution segments, each searching on its share of every level)
// into the whole test's: one answer, each instance's outcome, capacity and
// levels, and where their staircases parted when they did.
//
// A window every instance ran at the same level is a window of the whole
// test: its counts are summed, its rates added (the instances ran at once),
// its percentiles read again from the merged sketches (never averaged), and
// it fails when any instance's share failed it. Past a parting the
// instances ran different levels at the same time, so no window of the
// whole test exists there: the merged windows stop at the parting, and the
// answer is the lowest of the instances' answers (a level some instance's
// share failed at is not known to hold). Parts with no section merge to
// nil; a section on some parts only is refused.
func MergeCapacity(names []string, parts []*runrecord.Capacity) (*runrecord.Capacity, error) {
	var have []*runrecord.Capacity
	for _, c := range parts {
		if c != nil {
			have = append(have, c)
		}
	}
	if len(have) == 0 {
		return nil, nil //nolint:nilnil // no search ran: no section
	}
	if len(have) < len(parts) {
		i := slices.Index(parts, nil)
		return nil, fmt.Errorf("capacity: %s has no capacity section while other records do (not the same script?)", names[i])
	}
	for i, c := range have[1:] {
		if d := capacitySearchDiff(have[0], c); d != "" {
			return nil, fmt.Errorf("capacity: %s and %s ran different searches: %s", names[0], names[i+1], d)
		}
	}
	out := *have[0]
	out.Segment, out.Windows, out.Instances, out.Disagreement = "", nil, nil, ""
	for _, c := range have {
		out.Instances = append(out.Instances, runrecord.CapacityInstance{Segment: c.Segment, Outcome: c.Outcome,
			Capacity: c.Capacity, Levels: capacityLevels(c)})
	}
	common, parted := commonWindows(have)
	for i := range common {
		w, err := mergeCapacityWindow(out.Objectives, have, i)
		if err != nil {
			return nil, fmt.Errorf("capacity: window %d: %w", i+1, err)
		}
		out.Windows = append(out.Windows, w)
	}
	out.Disagreement = parted
	if parted != "" {
		lowest := lowestAnswer(have)
		out.Outcome, out.Capacity, out.LastPass, out.FirstFail = lowest.Outcome, lowest.Capacity, lowest.LastPass, lowest.FirstFail
		out.Binding, out.Boundary, out.Recommended = lowest.Binding, lowest.Boundary, lowest.Recommended
		out.SustainedS, out.UndecidedAbove = lowest.SustainedS, lowest.UndecidedAbove
	}
	out.WithTraceScales()
	return &out, nil
}

// capacitySearchDiff says how two sections' searches differ ("" when they
// are the same search).
func capacitySearchDiff(a, b *runrecord.Capacity) string {
	switch {
	case a.Model != b.Model:
		return "model " + a.Model + " vs " + b.Model
	case a.Min != b.Min || a.Max != b.Max:
		return fmt.Sprintf("range %g–%g vs %g–%g", a.Min, a.Max, b.Min, b.Max)
	case a.WindowS != b.WindowS || a.WarmupS != b.WarmupS:
		return fmt.Sprintf("window %gs (warm-up %gs) vs %gs (%gs)", a.WindowS, a.WarmupS, b.WindowS, b.WarmupS)
	case a.Precision != b.Precision:
		return fmt.Sprintf("precision %g vs %g", a.Precision, b.Precision)
	case !slices.Equal(a.Objectives, b.Objectives):
		return "other objectives"
	case (a.Trace == nil) != (b.Trace == nil) || a.Trace != nil && (a.Trace.Name != b.Trace.Name || a.Trace.MeanRate != b.Trace.MeanRate):
		return "other arrivals (a trace on one only, or other traces)"
	}
	return ""
}

func capacityLevels(c *runrecord.Capacity) []float64 {
	out := make([]float64, 0, len(c.Windows))
	for _, w := range c.Windows {
		out = append(out, w.Level)
	}
	return out
}

// commonWindows counts the windows every instance ran at the same level,
// and says where the staircases parted ("" when every instance ran the same
// windows to the same verdicts).
func commonWindows(cs []*runrecord.Capacity) (common []int, parted string) {
	for i := 0; ; i++ {
		var ran []string
		ended, same := 0, true
		for _, c := range cs {
			if i >= len(c.Windows) {
				ended++
				ran = append(ran, capacitySegment(c)+" had ended")
				continue
			}
			ran = append(ran, capacitySegment(c)+" ran "+fmtLevel(c.Windows[i].Level))
			same = same && i < len(cs[0].Windows) && c.Windows[i].Level == cs[0].Windows[i].Level
		}
		if ended == len(cs) {
			return common, ""
		}
		if ended > 0 || !same {
			return common, fmt.Sprintf("the staircases parted at window %d: %s", i+1, strings.Join(ran, ", "))
		}
		common = append(common, i)
		if v := verdictSplit(cs, i); v != "" {
			return common, fmt.Sprintf("the staircases parted at window %d (level %s): %s", i+1, fmtLevel(cs[0].Windows[i].Level), v)
		}
	}
}

// verdictSplit says how the instances' verdicts on one window differ (""
// when they agree).
func verdictSplit(cs []*runrecord.Capacity, i int) string {
	var pass, fail []string
	for _, c := range cs {
		if c.Windows[i].Verdict == "pass" {
			pass = append(pass, capacitySegment(c))
		} else {
			fail = append(fail, capacitySegment(c))
		}
	}
	if len(pass) == 0 || len(fail) == 0 {
		return ""
	}
	return strings.Join(pass, ", ") + " passed it, " + strings.Join(fail, ", ") + " failed it"
}

func capacitySegment(c *runrecord.Capacity) string {
	if c.Segment == "" {
		return "0:1"
	}
	return c.Segment
}

// lowestAnswer is the instance whose answer is lowest (below min lowest of
// all).
func lowestAnswer(cs []*runrecord.Capacity) *runrecord.Capacity {
	low := cs[0]
	for _, c := range cs[1:] {
		switch {
		case low.Capacity == nil:
		case c.Capacity == nil || *c.Capacity < *low.Capacity:
			low = c
		}
	}
	return low
}

// mergeCapacityWindow is window i of the whole test from every instance's.
func mergeCapacityWindow(objs []runrecord.CapacityObjective, cs []*runrecord.Capacity, i int) (runrecord.CapacityWindow, error) {
	first := cs[0].Windows[i]
	w := runrecord.CapacityWindow{Index: first.Index, Phase: first.Phase, Level: first.Level, StartS: first.StartS, EndS: first.EndS,
		Verdict: "pass", Settled: true, Sketches: map[string]*sketch.Sketch{}}
	var reasons []string
	var throughput, goodput, tokens []*float64
	decided := false // some instance's fail was a decided one
	for _, c := range cs {
		p := c.Windows[i]
		if w.Energy == nil {
			w.Energy = p.Energy // the GPUs' are the server's: every instance read the same
		}
		w.StartS, w.EndS = math.Min(w.StartS, p.StartS), math.Max(w.EndS, p.EndS)
		w.Calls, w.Failed, w.Censored = w.Calls+p.Calls, w.Failed+p.Failed, w.Censored+p.Censored
		w.Settled, w.Extended = w.Settled && p.Settled, w.Extended || p.Extended
		if p.EarlyStopS != nil && (w.EarlyStopS == nil || *p.EarlyStopS < *w.EarlyStopS) {
			w.EarlyStopS = p.EarlyStopS
		}
		if p.Verdict != "pass" {
			w.Verdict = "fail"
			reasons = append(reasons, capacitySegment(c)+": "+p.Reason)
			decided = decided || !p.Undecided
		}
		throughput, goodput, tokens = append(throughput, p.Throughput), append(goodput, p.Goodput), append(tokens, p.OutputTokensSec)
		for name, sk := range p.Sketches {
			if sk == nil {
				continue
			}
			if have := w.Sketches[name]; have != nil {
				if err := have.Merge(sk); err != nil {
					return w, fmt.Errorf("%s sketch: %w", name, err)
				}
			} else {
				w.Sketches[name] = sk.Clone()
			}
		}
	}
	// A fail every failing instance only could not decide is undecided for
	// the whole test too (the bounds are each instance's, in its record).
	w.Undecided = w.Verdict == "fail" && !decided
	w.Throughput, w.Goodput, w.OutputTokensSec = sumKnown(throughput), sumKnown(goodput), sumKnown(tokens)
	if w.Throughput != nil && w.Goodput != nil && *w.Throughput > 0 && w.Calls+w.Censored > 0 {
		// The instances' goodput calls over all their measured calls.
		r := *w.Goodput / *w.Throughput * float64(w.Calls) / float64(w.Calls+w.Censored)
		w.GoodputRatio = &r
	}
	w.TTFT, w.TPOT, w.E2E = sketchPercentiles(w.Sketches["ttft"]), sketchPercentiles(w.Sketches["tpot"]), sketchPercentiles(w.Sketches["e2e"])
	if err := mergedMargins(&w, objs, cs, i); err != nil {
		return w, err
	}
	if w.Verdict == "pass" {
		w.Reason = "closest to its limit: " + closestMargin(w.Margins)
	} else {
		w.Reason = strings.Join(reasons, "; ")
	}
	return w, nil
}

// mergedMargins reads every objective again on the whole test's window:
// percentiles of every client's calls from the merged sketches, the error
// rate from the summed counts. A window keeps only every client's sketches,
// so an objective on one client's calls takes the worst instance's margin.
func mergedMargins(w *runrecord.CapacityWindow, objs []runrecord.CapacityObjective, cs []*runrecord.Capacity, i int) error {
	w.Margin = math.Inf(-1)
	for k, o := range objs {
		m := runrecord.CapacityMargin{Objective: o.Text, Margin: math.Inf(-1)}
		var v float64
		switch {
		case o.Client != "":
			v = math.NaN()
		case o.Figure == "errors" && w.Calls > 0:
			v = float64(w.Failed) / float64(w.Calls)
		case o.Figure != "errors" && w.Sketches[o.Figure] != nil:
			v = w.Sketches[o.Figure].Quantile(o.Quantile)
		default:
			v = math.NaN()
		}
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			m.Observed = &v
			m.Margin = objectiveMargin(o, v)
		}
		for _, c := range cs { // what the instances' own reading adds (censoring, a client's calls)
			if ms := c.Windows[i].Margins; k < len(ms) && ms[k].Objective == o.Text {
				if m.Observed == nil || ms[k].Margin >= 1 {
					m.Margin = math.Max(m.Margin, ms[k].Margin)
				}
			} else {
				return fmt.Errorf("%s: the margins do not list the objective %q", capacitySegment(c), o.Text)
			}
		}
		w.Margins = append(w.Margins, m)
		w.Margin = math.Max(w.Margin, m.Margin)
	}
	if w.Verdict == "fail" {
		w.Margin = math.Max(w.Margin, math.Min(1, maxInstanceMargin(cs, i)))
	}
	return nil
}

func maxInstanceMargin(cs []*runrecord.Capacity, i int) float64 {
	m := math.Inf(-1)
	for _, c := range cs {
		m = math.Max(m, c.Windows[i].Margin)
	}
	return m
}

func objectiveMargin(o runrecord.CapacityObjective, observed float64) float64 {
	if o.Limit == 0 {
		if observed > 0 {
			return 1
		}
		return -1
	}
	return observed/o.Limit - 1
}

func closestMargin(ms []runrecord.CapacityMargin) string {
	best := ""
	top := math.Inf(-1)
	for _, m := range ms {
		if m.Margin > top {
			best, top = m.Objective, m.Margin
		}
	}
	return best
}

// sumKnown adds the figures every instance measured; one unknown makes the
// whole test's unknown.
func sumKnown(vs []*float64) *float64 {
	total := 0.0
	for _, v := range vs {
		if v == nil {
			return nil
		}
		total += *v
	}
	return &total
}

func sketchPercentiles(sk *sketch.Sketch) runrecord.CapacityPercentiles {
	if sk == nil {
		return runrecord.CapacityPercentiles{}
	}
	q := func(p float64) *float64 {
		if v := sk.Quantile(p); !math.IsNaN(v) && !math.IsInf(v, 0) {
			return &v
		}
		return nil
	}
	return runrecord.CapacityPercentiles{P50: q(0.5), P90: q(0.9), P95: q(0.95), P99: q(0.99)}.WithIntervals(sk)
}
