package capacity

import (
	"math"
	"slices"
	"sort"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// levels chooses each window's level from the verdicts so far.
type levels struct {
	cfg   Config
	tried []runrecord.CapacityWindow // every judged window, in order
}

// Phases of a window.
const (
	phaseBracket = "bracket"
	phaseRefine  = "refine"
	// phaseSustain is the window that confirms an answer in steady state:
	// several windows long, at the level about to be given as the answer.
	phaseSustain = "sustain"
)

// Outcomes.
const (
	OutcomeFound      = "found"
	OutcomeBelowMin   = "below_min"
	OutcomeAboveMax   = "above_max"
	OutcomeUnfinished = "unfinished"
)

// next takes a judged window and returns the next level and its phase, or
// an outcome when the search is over. No answer is given before a sustain
// window at it passed: the bracket found the boundary in windows that
// started from the previous level's queue, which at a level near the
// boundary relaxes over longer than a window; the sustain window runs
// long enough for the queue to reach its steady state there. Its fail makes
// the level a fail (bracket reads it so), and the search goes on below.
func (l *levels) next(row runrecord.CapacityWindow) (level float64, phase, outcome string) {
	l.tried = append(l.tried, row)
	pass, fail, ok := l.bracket()
	switch {
	case !ok && fail == l.cfg.Min:
		return 0, "", OutcomeBelowMin
	case !ok: // every level tried failed, but not min itself yet: go down to min
		return l.cfg.Min, phaseBracket, ""
	case fail == 0 && pass < l.cfg.Max: // nothing failed: keep doubling
		return l.round(min(pass*2, l.cfg.Max)), phaseBracket, ""
	case fail != 0 && !l.narrow(pass, fail):
		return l.round(math.Sqrt(pass * fail)), phaseRefine, ""
	case l.sustained(pass) && fail == 0:
		return 0, "", OutcomeAboveMax
	case l.sustained(pass):
		return 0, "", OutcomeFound
	}
	return pass, phaseSustain, ""
}

// judgedAt is the level a window's verdict speaks for: its own, or, for a
// pass whose calls came well under it, the rate they came at (Carried): a
// pass there says nothing of the level itself, but a level is known to
// hold wherever a heavier load was shown to (the search's premise of
// monotone figures).
func judgedAt(r runrecord.CapacityWindow) float64 {
	if r.Verdict == "pass" && r.Carried != nil && *r.Carried < r.Level {
		return *r.Carried
	}
	return r.Level
}

// sustained says whether a sustain window at level passed (the latest one
// there, which bracket reads as the level's verdict).
func (l *levels) sustained(level float64) bool {
	r := l.lastSustain(level)
	return r != nil && r.Verdict == "pass"
}

// lastSustain is the latest sustain window at level (nil: none).
func (l *levels) lastSustain(level float64) *runrecord.CapacityWindow {
	for i := len(l.tried) - 1; i >= 0; i-- {
		if r := &l.tried[i]; judgedAt(*r) == level && r.Phase == phaseSustain {
			return r
		}
	}
	return nil
}

// narrow says whether the bracket meets the precision (for the closed
// model: or the levels are adjacent whole numbers).
func (l *levels) narrow(pass, fail float64) bool {
	if l.cfg.Model == ModelConcurrency && fail-pass <= 1 {
		return true
	}
	return (fail-pass)/pass <= l.cfg.Precision
}

func (l *levels) round(v float64) float64 {
	if l.cfg.Model == ModelConcurrency {
		return math.Max(math.Round(v), l.cfg.Min)
	}
	return v
}

// bracket reads the verdicts from the isotonic fit: the highest passing
// level below every failing one, and the lowest failing level above it (0
// when none failed). ok is false when no level passed.
func (l *levels) bracket() (pass, fail float64, ok bool) {
	fitted := isotonic(l.tried)
	for _, p := range fitted {
		if p.margin <= 0 {
			pass, ok = p.level, true
		} else if fail == 0 {
			fail = p.level
		}
	}
	if !ok {
		return 0, fitted[0].level, false
	}
	// The fit is monotone, so every level above the highest pass fails.
	fail = 0
	for _, p := range fitted {
		if p.level > pass && p.margin > 0 {
			fail = p.level
			break
		}
	}
	return pass, fail, true
}

// pooled is one level's fitted margin.
type pooled struct {
	level, margin, weight float64
}

// isotonic is the non-decreasing least-squares fit of the windows' clipped
// margins against their level (pool adjacent violators), one entry per
// level tried, ascending. A level that ran a sustain window is that
// window's alone: it saw the level in steady state, which the shorter
// windows before it did not.
func isotonic(rows []runrecord.CapacityWindow) []pooled {
	byLevel := map[float64]*pooled{}
	sustained := map[float64]bool{}
	for _, r := range rows {
		if r.Phase == phaseSustain {
			sustained[judgedAt(r)] = true
		}
	}
	for _, r := range rows {
		at := judgedAt(r)
		if sustained[at] && r.Phase != phaseSustain {
			continue
		}
		p := byLevel[at]
		if sustained[at] {
			p = nil // the latest sustain window replaces an earlier one
		}
		if p == nil {
			p = &pooled{level: at}
			byLevel[at] = p
		}
		m := math.Max(-1, math.Min(1, r.Margin))
		p.margin = (p.margin*p.weight + m) / (p.weight + 1)
		p.weight++
	}
	pts := make([]pooled, 0, len(byLevel))
	for _, p := range byLevel {
		pts = append(pts, *p)
	}
	sort.Slice(pts, func(a, b int) bool { return pts[a].level < pts[b].level })
	// Blocks of pooled levels: each holds its mean margin and total weight.
	type block struct {
		margin, weight float64
		n              int
	}
	var blocks []block
	for _, p := range pts {
		blocks = append(blocks, block{p.margin, p.weight, 1})
		for len(blocks) > 1 && blocks[len(blocks)-2].margin > blocks[len(blocks)-1].margin {
			a, b := blocks[len(blocks)-2], blocks[len(blocks)-1]
			w := a.weight + b.weight
			blocks = append(blocks[:len(blocks)-2], block{(a.margin*a.weight + b.margin*b.weight) / w, w, a.n + b.n})
		}
	}
	i := 0
	for _, b := range blocks {
		for k := 0; k < b.n; k++ {
			pts[i].margin = b.margin
			i++
		}
	}
	return pts
}

// answer fills the result's verdict fields from the windows judged.
func (l *levels) answer(c *runrecord.Capacity) {
	if len(l.tried) == 0 {
		return
	}
	pass, fail, ok := l.bracket()
	if ok {
		c.Capacity, c.LastPass = ptr(pass), ptr(pass)
		c.Recommended = ptr(l.round(pass * l.cfg.Share))
		if l.cfg.Model == ModelConcurrency {
			c.Recommended = ptr(math.Max(math.Floor(pass*l.cfg.Share), 1))
		}
	}
	if fail > 0 {
		c.FirstFail = ptr(fail)
	}
	if r := l.lastSustain(pass); ok && r != nil && r.Verdict == "pass" {
		c.SustainedS = ptr(r.EndS - r.StartS)
	}
	// The levels above the answer that could not decide, below the lowest
	// level shown to fail: the capacity may lie up there.
	shown := math.Inf(1)
	for _, r := range l.tried {
		if r.Verdict == "fail" && !r.Undecided && (!ok || r.Level > pass) {
			shown = min(shown, r.Level)
		}
	}
	for _, r := range l.tried {
		if (!ok || r.Level > pass) && r.Level < shown && r.Undecided && !slices.Contains(c.UndecidedAbove, r.Level) {
			c.UndecidedAbove = append(c.UndecidedAbove, r.Level)
		}
	}
	slices.Sort(c.UndecidedAbove)
	failRow, passRow := l.last(fail), l.last(pass)
	switch {
	case failRow != nil:
		c.Binding = closest(failRow.Margins)
	case passRow != nil:
		c.Binding = closest(passRow.Margins)
	}
	if failRow != nil && passRow != nil {
		c.Boundary = "smooth"
		if failRow.EarlyStopS != nil || failRow.Margin-passRow.Margin > 1 {
			c.Boundary = "cliff"
		}
	}
}

// last is the latest window run at level (nil when none or level 0).
func (l *levels) last(level float64) *runrecord.CapacityWindow {
	if level == 0 {
		return nil
	}
	for i := len(l.tried) - 1; i >= 0; i-- {
		if judgedAt(l.tried[i]) == level {
			return &l.tried[i]
		}
	}
	return nil
}
