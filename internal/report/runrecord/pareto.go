package runrecord

import (
	"cmp"
	"math"
	"slices"
)

// The Pareto front of a run's load levels: a serving team picks a level by
// the trade between what the service delivers in all (output tokens/s) and
// what each user sees (their stream's own tokens/s). Every level of a step
// load, and every window of a capacity search, is one such pair; a level is
// on the front when no other level gives both more throughput and more
// interactivity, the only levels worth choosing between.

// ParetoPoint is one load level: what the service delivered in all against
// what one user saw.
type ParetoPoint struct {
	// Source is "stage" (a load stage: Stages) or "capacity" (a window of
	// Capacity.search: Capacity.Windows, Window its index there).
	Source string `json:"source"`
	Window *int   `json:"window,omitempty"`
	// Level is the stage's VUs or arrival rate, or the window's level.
	Level  float64 `json:"level"`
	ByRate bool    `json:"by_rate,omitempty"`
	// OutputTokensPerSec is every call's output tokens completed per second
	// at that level.
	OutputTokensPerSec float64 `json:"output_tokens_per_sec"`
	// PerUserTokensPerSec is the median call's decode speed (output tokens
	// after the first over their time, 1000 / TPOT): the interactivity.
	PerUserTokensPerSec float64 `json:"per_user_tokens_per_sec"`
	// OnFront: no other point has both figures at least as high and one
	// higher.
	OnFront bool `json:"on_front"`
}

// ParetoSourceStage and ParetoSourceCapacity name where a point came from.
const (
	ParetoSourceStage    = "stage"
	ParetoSourceCapacity = "capacity"
)

// ParetoPoints are the levels of a run's stages (two or more: one level is
// no trade-off) and of its capacity search's windows, each with both
// figures measured, marked on or off the front; nil when fewer than two
// levels have both. A stage keeps an unknown figure as 0 (FiniteOr0), and
// a stage whose calls decoded nothing delivered nothing: both are left out
// rather than drawn as a level with no interactivity.
func ParetoPoints(stages []StageRecord, c *Capacity) []ParetoPoint {
	var pts []ParetoPoint
	if len(stages) >= 2 {
		for _, st := range stages {
			pts = appendPareto(pts, ParetoPoint{Source: ParetoSourceStage, Level: st.Concurrency, ByRate: st.ByRate,
				OutputTokensPerSec: st.OutputTokensPerSec, PerUserTokensPerSec: st.TokensPerSecP50})
		}
	}
	if c != nil {
		for i, w := range c.Windows {
			if w.OutputTokensSec == nil || w.TPOT.P50 == nil {
				continue
			}
			// The median of 1000/TPOT is 1000 over the median TPOT: the
			// transform is monotone, so no sketch of tokens/s is needed.
			pts = appendPareto(pts, ParetoPoint{Source: ParetoSourceCapacity, Window: &i, Level: w.Level,
				ByRate: c.Model != "concurrency", OutputTokensPerSec: *w.OutputTokensSec, PerUserTokensPerSec: 1000 / *w.TPOT.P50})
		}
	}
	if len(pts) < 2 {
		return nil
	}
	for i := range pts {
		pts[i].OnFront = !slices.ContainsFunc(pts, func(o ParetoPoint) bool { return dominates(o, pts[i]) })
	}
	return pts
}

// appendPareto adds p when both its figures are measured and above zero.
func appendPareto(pts []ParetoPoint, p ParetoPoint) []ParetoPoint {
	if !(p.OutputTokensPerSec > 0 && p.PerUserTokensPerSec > 0) ||
		math.IsInf(p.OutputTokensPerSec, 0) || math.IsInf(p.PerUserTokensPerSec, 0) {
		return pts
	}
	return append(pts, p)
}

// dominates says a is at least as good as b on both figures and better on one.
func dominates(a, b ParetoPoint) bool {
	return a.OutputTokensPerSec >= b.OutputTokensPerSec && a.PerUserTokensPerSec >= b.PerUserTokensPerSec &&
		(a.OutputTokensPerSec > b.OutputTokensPerSec || a.PerUserTokensPerSec > b.PerUserTokensPerSec)
}

// ParetoFront is the points on the front, by interactivity: the line a
// chart draws through them.
func ParetoFront(pts []ParetoPoint) []ParetoPoint {
	var front []ParetoPoint
	for _, p := range pts {
		if p.OnFront {
			front = append(front, p)
		}
	}
	slices.SortStableFunc(front, func(a, b ParetoPoint) int { return cmp.Compare(a.PerUserTokensPerSec, b.PerUserTokensPerSec) })
	return front
}
