package compare

import (
	"fmt"
	"slices"
	"strings"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// Capacity sets this run's answer against the baseline's; nil
// unless both runs searched.
func Capacity(cur, base *runrecord.Capacity) *runrecord.CapacityChange {
	if cur == nil || base == nil {
		return nil
	}
	ch := &runrecord.CapacityChange{Unit: cur.Unit, Baseline: base.Capacity, Current: cur.Capacity,
		BaselineOutcome: base.Outcome, Outcome: cur.Outcome, Tolerance: cur.Precision + base.Precision, Verdict: runrecord.VerdictSame}
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
			ch.Verdict = runrecord.VerdictWorse
		case d > ch.Tolerance && base.Outcome == "found":
			ch.Verdict = runrecord.VerdictBetter
		}
	case cur.Outcome == "below_min" && base.Capacity != nil:
		ch.Verdict = runrecord.VerdictWorse
	case base.Outcome == "below_min" && cur.Capacity != nil:
		ch.Verdict = runrecord.VerdictBetter
	}
	return ch
}

// capacityIncomparable says why two searches' answers measure different
// things ("" when they measure the same).
func capacityIncomparable(cur, base *runrecord.Capacity) string {
	if cur.Model != base.Model {
		return fmt.Sprintf("the searches ran different load models (%s vs %s)", cur.Model, base.Model)
	}
	texts := func(c *runrecord.Capacity) []string {
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
