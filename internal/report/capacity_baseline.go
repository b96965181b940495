package report

// A capacity search's answer against the baseline's: the one number a
// pipeline gates on, compared so that a drop between two runs is a finding
// even when no single latency row moved past its interval.

import (
	"bytes"
	"fmt"
	"html"
	"slices"
	"strings"
)

// CapacityChange is this run's capacity against the baseline's. The two
// searches' answers are each known to within their precision, so a change
// counts only past both precisions together.
type CapacityChange struct {
	Unit     string   `json:"unit"`
	Baseline *float64 `json:"baseline"` // null: the baseline's search found none (below min)
	Current  *float64 `json:"current"`
	// BaselineOutcome and Outcome are the searches' outcomes ("found",
	// "below_min", "above_max", "unfinished").
	BaselineOutcome string `json:"baseline_outcome"`
	Outcome         string `json:"outcome"`
	// DeltaPct is (current − baseline) / baseline; null when either is unknown.
	DeltaPct *float64 `json:"delta_pct"`
	// Tolerance is the change below which the answers are the same: the sum
	// of the two searches' precisions.
	Tolerance float64 `json:"tolerance"`
	Verdict   string  `json:"verdict"` // VerdictBetter, VerdictWorse, VerdictSame
	// Note says why the answers cannot be set side by side, when they
	// cannot (another model or objectives): then Verdict is VerdictSame.
	Note string `json:"note,omitempty"`
}

// compareCapacity sets this run's answer against the baseline's; nil
// unless both runs searched.
func compareCapacity(cur, base *Capacity) *CapacityChange {
	if cur == nil || base == nil {
		return nil
	}
	ch := &CapacityChange{Unit: cur.Unit, Baseline: base.Capacity, Current: cur.Capacity,
		BaselineOutcome: base.Outcome, Outcome: cur.Outcome, Tolerance: cur.Precision + base.Precision, Verdict: VerdictSame}
	if note := capacityIncomparable(cur, base); note != "" {
		ch.Note = note
		return ch
	}
	switch {
	case cur.Capacity != nil && base.Capacity != nil && *base.Capacity > 0:
		d := (*cur.Capacity - *base.Capacity) / *base.Capacity
		ch.DeltaPct = &d
		// Every answer is a level that passed; only a found one is also
		// the boundary. A top that passed or an unfinished search is a lower
		// bound: it can show the other run lower, never itself lower.
		switch {
		case d < -ch.Tolerance && cur.Outcome == "found":
			ch.Verdict = VerdictWorse
		case d > ch.Tolerance && base.Outcome == "found":
			ch.Verdict = VerdictBetter
		}
	case cur.Outcome == "below_min" && base.Capacity != nil:
		ch.Verdict = VerdictWorse
	case base.Outcome == "below_min" && cur.Capacity != nil:
		ch.Verdict = VerdictBetter
	}
	return ch
}

// capacityIncomparable says why two searches' answers measure different
// things ("" when they measure the same).
func capacityIncomparable(cur, base *Capacity) string {
	if cur.Model != base.Model {
		return fmt.Sprintf("the searches ran different load models (%s vs %s)", cur.Model, base.Model)
	}
	texts := func(c *Capacity) []string {
		out := make([]string, len(c.Objectives))
		for i, o := range c.Objectives {
			out[i] = o.Client + ":" + o.Text
		}
		slices.Sort(out)
		return out
	}
	if !slices.Equal(texts(cur), texts(base)) {
		return "the searches held different objectives (" + strings.Join(texts(cur), ", ") + " vs " + strings.Join(texts(base), ", ") + ")"
	}
	return ""
}

func (ch *CapacityChange) String() string {
	s := fmt.Sprintf("%s → %s %s", fmtCapacityOutcome(ch.Baseline, ch.BaselineOutcome), fmtCapacityOutcome(ch.Current, ch.Outcome), ch.Unit)
	if ch.DeltaPct != nil {
		s += fmt.Sprintf(" (%+.1f%%, within ±%s counts as the same)", 100**ch.DeltaPct, fmtPct(ch.Tolerance))
	}
	if ch.Note != "" {
		s += "; not compared: " + ch.Note
	}
	return s
}

func fmtCapacityOutcome(v *float64, outcome string) string {
	switch {
	case outcome == "below_min":
		return "below min"
	case v == nil:
		return "unknown"
	case outcome == "above_max":
		return "above " + fmtLevel(*v)
	}
	return fmtLevel(*v)
}

// capacityChangeFinding is capacity_dropped when the capacity fell against
// the baseline's by more than the searches can tell apart.
func capacityChangeFinding(ch *CapacityChange, findings []Finding) []Finding {
	if ch == nil || ch.Verdict != VerdictWorse {
		return findings
	}
	f := Finding{
		ID: "capacity_dropped", Title: "The capacity at the objectives fell against the baseline", Severity: "warning",
		Evidence: []string{"capacity " + ch.String()},
		Advice: "The same objectives now hold at a lower load: the service, its configuration or the prompts changed. The " +
			"capacity windows show which objective bound it; the baseline rows say which figure moved. " + guideLink("capacity_dropped"),
	}
	if ch.DeltaPct != nil {
		f.Values = map[string]float64{"delta_pct": *ch.DeltaPct}
	}
	return append(findings, f)
}

func writeCapacityChangeText(b *strings.Builder, ch *CapacityChange) {
	if ch == nil {
		return
	}
	fmt.Fprintf(b, "\n  baseline, capacity: %s: %s\n", ch.Verdict, ch)
}

func writeCapacityChangeHTML(b *bytes.Buffer, ch *CapacityChange) {
	if ch == nil {
		return
	}
	fmt.Fprintf(b, `<p id="capacity-comparison">Capacity against the baseline: <span class="%s">%s</span>: %s</p>`+"\n",
		verdictClass(ch.Verdict), ch.Verdict, html.EscapeString(ch.String()))
}
