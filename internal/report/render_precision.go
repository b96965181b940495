package report

import (
	"bytes"
	"fmt"
	"html"
	"strings"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// The precision gate's section of the text and HTML reports: whether the
// run stopped because it knew enough or because its cap came first, and
// each target with its interval, so a reader sees how sure each figure is.

// precisionAnswer is the section's headline.
func precisionAnswer(p *runrecord.Precision) string {
	ended := "still open when the test ended"
	if p.EndedS != nil {
		ended = fmt.Sprintf("after %s", fmtSeconds(*p.EndedS))
	}
	switch p.Outcome {
	case "met":
		return fmt.Sprintf("every target known to its margin %s: the run stopped because it knew enough", ended)
	case "cap":
		return fmt.Sprintf("time cap reached %s before every target was known to its margin", ended)
	}
	return "the test ended before every target was known to its margin"
}

func fmtSeconds(s float64) string {
	if s >= 100 {
		return fmt.Sprintf("%.0f s", s)
	}
	return fmt.Sprintf("%.1f s", s)
}

var precisionColumns = []string{"target", "calls", "estimate", "95% interval", "met"} //nolint:gochecknoglobals // read-only

func precisionCells(t runrecord.PrecisionTarget) []string {
	interval := "too few calls to bound it"
	switch {
	case t.Lo != nil && t.Hi != nil:
		interval = fmtMS(*t.Lo) + "–" + fmtMS(*t.Hi)
	case t.Lo != nil:
		interval = "≥ " + fmtMS(*t.Lo) + " (too few calls for an upper end)"
	}
	met := "no"
	if t.Met {
		met = "yes"
		if t.MetS != nil {
			met = "at " + fmtSeconds(*t.MetS)
		}
	}
	return []string{t.Target, fmt.Sprint(t.Calls), fmtOptMS(t.Estimate), interval, met}
}

func precisionInstanceLine(in runrecord.PrecisionInstance) string {
	s := fmt.Sprintf("instance %s: %s", in.Segment, in.Outcome)
	if in.EndedS != nil {
		s += " after " + fmtSeconds(*in.EndedS)
	}
	return s
}

// PrecisionText is the text report's precision section ("" without a gate).
func PrecisionText(p *runrecord.Precision) string {
	if p == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "precision gate (%.0f%% intervals)\n  %s\n", 100*p.Confidence, precisionAnswer(p))
	for _, in := range p.Instances {
		fmt.Fprintf(&b, "  %s\n", precisionInstanceLine(in))
	}
	rows := make([][]string, len(p.Targets))
	for i, t := range p.Targets {
		rows[i] = precisionCells(t)
	}
	writeAlignedText(&b, precisionColumns, rows)
	return b.String()
}

// writePrecisionHTML writes the section as the text's table.
func writePrecisionHTML(b *bytes.Buffer, p *runrecord.Precision) {
	if p == nil {
		return
	}
	fmt.Fprintf(b, `<h2>Precision gate</h2><p class="sub" id="precision-answer">%s</p>`, html.EscapeString(precisionAnswer(p)))
	for _, in := range p.Instances {
		fmt.Fprintf(b, `<p class="sub">%s</p>`, html.EscapeString(precisionInstanceLine(in)))
	}
	rows := make([][]string, len(p.Targets))
	for i, t := range p.Targets {
		rows[i] = precisionCells(t)
	}
	writeTableHTML(b, "precision", precisionColumns, rows)
}
