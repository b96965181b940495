package report

import (
	"bytes"
	"fmt"
	"html"
	"strings"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// A capacity search's answer against the baseline's: the one number a
// pipeline gates on, compared so that a drop between two runs is a finding
// even when no single latency row moved past its interval.

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

// capacityChangeFinding is capacity_dropped when the capacity fell against
// the baseline's by more than the searches can tell apart.
func capacityChangeFinding(ch *runrecord.CapacityChange, findings []runrecord.Finding) []runrecord.Finding {
	if ch == nil || ch.Verdict != runrecord.VerdictWorse {
		return findings
	}
	f := runrecord.Finding{
		ID: "capacity_dropped", Title: "The capacity at the objectives fell against the baseline", Severity: "warning",
		Evidence: []string{"capacity " + capacityChangeText(ch)},
		Advice: "The same objectives now hold at a lower load: the service, its configuration or the prompts changed. The " +
			"capacity windows show which objective bound it; the baseline rows say which figure moved. " + guideLink("capacity_dropped"),
	}
	if ch.DeltaPct != nil {
		f.Values = map[string]float64{"delta_pct": *ch.DeltaPct}
	}
	return append(findings, f)
}

func writeCapacityChangeText(b *strings.Builder, ch *runrecord.CapacityChange) {
	if ch == nil {
		return
	}
	fmt.Fprintf(b, "\n  baseline, capacity: %s: %s\n", ch.Verdict, capacityChangeText(ch))
}

func writeCapacityChangeHTML(b *bytes.Buffer, ch *runrecord.CapacityChange) {
	if ch == nil {
		return
	}
	fmt.Fprintf(b, `<p id="capacity-comparison">Capacity against the baseline: <span class="%s">%s</span>: %s</p>`+"\n",
		verdictClass(ch.Verdict), ch.Verdict, html.EscapeString(capacityChangeText(ch)))
}
