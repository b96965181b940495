package report

import (
	"fmt"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

func capacityChangeText(ch *runrecord.CapacityChange) string {
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

func serverChangeText(c runrecord.ServerChange) string {
	f := func(v float64) string {
		switch c.Unit {
		case "ms":
			return fmtMS(v)
		case "share":
			return fmtPct(v)
		case "per s":
			return fmt.Sprintf("%.2f/s", v)
		default:
			return fmt.Sprintf("%.2f", v)
		}
	}
	return fmt.Sprintf("%s %s → %s", c.Figure, f(c.Baseline), f(c.Current))
}

func jobChangeText(c runrecord.JobChange) string {
	return fmt.Sprintf("%s %s → %s (%+.0f%%)", c.Figure, fmtMS(c.Baseline), fmtMS(c.Current), c.DeltaPct)
}
