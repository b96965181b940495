package report

import (
	"bytes"
	"cmp"
	"fmt"
	"html"
	"slices"
	"strings"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// The capacity search's section of the text and HTML reports: the answer in
// one line, then every window the search ran, so a reader sees the staircase
// that led to it and why each level passed or failed.

// capacityAnswer is the section's headline: the level found (or why none
// was), the bracket, the objective that bound it and the level to plan at.
func capacityAnswer(c *runrecord.Capacity) string {
	switch c.Outcome {
	case "below_min":
		if c.MinUndecided() {
			return fmt.Sprintf("capacity below min: the calls at the lowest level, %s %s, could not show it holds "+
				"(a longer maxWindow lets its window run until they can)", fmtLevel(c.Min), c.Unit) + capacityBinding(c)
		}
		return fmt.Sprintf("capacity below min: the lowest level, %s %s, already failed", fmtLevel(c.Min), c.Unit) + capacityBinding(c)
	case "above_max":
		return fmt.Sprintf("capacity above max: the highest level, %s %s, passed every objective", fmtLevel(c.Max), c.Unit) +
			c.Assurance() + capacityPlan(c)
	case "unfinished":
		s := "capacity search unfinished: the test ended before the boundary was found to the precision"
		if c.Capacity != nil {
			s += fmt.Sprintf("; highest pass so far %s %s%s", fmtLevel(*c.Capacity), c.Unit, c.Assurance())
		}
		if c.FirstFail != nil {
			s += fmt.Sprintf(", first fail %s", fmtLevel(*c.FirstFail))
		}
		return s + capacityBinding(c)
	}
	s := "capacity " + fmtOptLevel(c.Capacity) + " " + c.Unit + capacityScale(c) + c.Assurance()
	if c.FirstFail != nil {
		s += fmt.Sprintf(" (first fail %s, precision %s)", fmtLevel(*c.FirstFail), fmtPct(c.Precision))
	}
	if c.Boundary != "" {
		s += ", a " + c.Boundary + " boundary"
	}
	return s + capacityBinding(c) + capacityPlan(c)
}

// capacityScale is the capacity as a speed of the trace the search
// replayed ("" without one).
func capacityScale(c *runrecord.Capacity) string {
	if c.Trace == nil || c.Trace.Scale == nil {
		return ""
	}
	return fmt.Sprintf(" (%s at %.3g× its recorded speed)", c.Trace.Name, *c.Trace.Scale)
}

func capacityBinding(c *runrecord.Capacity) string {
	if c.Binding == "" {
		return ""
	}
	return "; bound by " + c.Binding
}

func capacityPlan(c *runrecord.Capacity) string {
	if c.Recommended == nil {
		return ""
	}
	s := fmt.Sprintf("; plan production at %s %s (%s of it)", fmtLevel(*c.Recommended), c.Unit, fmtPct(c.Share))
	if c.Trace != nil && c.Trace.RecommendedScale != nil {
		s += fmt.Sprintf(", the trace at %.3g×", *c.Trace.RecommendedScale)
	}
	return s
}

var capacityColumns = []string{"#", "phase", "level", "verdict", "calls", "ttft p95", "tpot p95", "e2e p99", //nolint:gochecknoglobals // column heads
	"goodput/s", "out tok/s", "stopped", "why"}

// capacityEnergyColumns go before "stopped" when a GPU exporter measured
// some window.
var capacityEnergyColumns = []string{"GPU W", "J/out tok", "J/req"} //nolint:gochecknoglobals // column heads

// capacityTable is the windows' table: the columns and a row per window,
// with the GPUs' energy columns when any window has them.
func capacityTable(c *runrecord.Capacity) (cols []string, rows [][]string) {
	energy := slices.ContainsFunc(c.Windows, func(w runrecord.CapacityWindow) bool { return w.Energy != nil })
	cols = capacityColumns
	if energy {
		n := len(capacityColumns) - 2
		cols = slices.Concat(capacityColumns[:n], capacityEnergyColumns, capacityColumns[n:])
	}
	rows = make([][]string, len(c.Windows))
	for i, w := range c.Windows {
		cells := capacityWindowCells(w)
		if energy {
			n := len(cells) - 2
			cells = slices.Concat(cells[:n], capacityEnergyCells(w.Energy), cells[n:])
		}
		rows[i] = cells
	}
	return cols, rows
}

// capacityEnergyCells are a window's average power, J per output token and
// per request ("—" unknown, "" no exporter covered it).
func capacityEnergyCells(e *runrecord.CapacityEnergy) []string {
	if e == nil {
		return []string{"", "", ""}
	}
	return []string{fmtOptFormat(e.AvgPowerW, "%.0f"), fmtOptFormat(e.JPerOutputToken, "%.3g"), fmtOptFormat(e.JPerRequest, "%.3g")}
}

func fmtOptFormat(p *float64, format string) string {
	if p == nil {
		return "—"
	}
	return fmt.Sprintf(format, *p)
}

// cells is one window's row, in capacityColumns' order.
func capacityWindowCells(w runrecord.CapacityWindow) []string {
	stopped := ""
	if w.EarlyStopS != nil {
		stopped = fmt.Sprintf("at %.0fs", *w.EarlyStopS)
	}
	calls := fmt.Sprintf("%d", w.Calls)
	if w.Failed > 0 {
		calls += fmt.Sprintf(" (%d failed)", w.Failed)
	}
	verdict := w.Verdict
	if w.Undecided {
		verdict += " (undecided)"
	}
	return []string{fmt.Sprintf("%d", w.Index), w.Phase, fmtLevel(w.Level), verdict, calls, fmtRecordedMS(w.TTFT.P95, w.TTFT.P95CI),
		fmtRecordedMS(w.TPOT.P95, w.TPOT.P95CI), fmtRecordedMS(w.E2E.P99, w.E2E.P99CI), fmtOptNum(w.Goodput), fmtOptNum(w.OutputTokensSec), stopped, w.Reason}
}

// CapacityText is the text report's capacity section ("" without a search).
func CapacityText(c *runrecord.Capacity) string {
	if c == nil {
		return ""
	}
	var b strings.Builder
	objectives := make([]string, len(c.Objectives))
	for i, o := range c.Objectives {
		objectives[i] = o.Text
		if o.Client != "" {
			objectives[i] = o.Client + ": " + o.Text
		}
	}
	fmt.Fprintf(&b, "capacity search (%s model, %s–%s %s, windows of %.0fs after %.0fs warm-up; %s)\n",
		c.Model, fmtLevel(c.Min), fmtLevel(c.Max), c.Unit, c.WindowS, c.WarmupS, strings.Join(objectives, ", "))
	fmt.Fprintf(&b, "  %s\n", capacityAnswer(c))
	if c.Disagreement != "" {
		fmt.Fprintf(&b, "  instances disagreed: %s\n", c.Disagreement)
	}
	for _, in := range c.Instances {
		fmt.Fprintf(&b, "  %s\n", capacityInstanceLine(in, c.Unit))
	}
	cols, rows := capacityTable(c)
	writeAlignedText(&b, cols, rows)
	writeTooFewLegend(&b, anyStarredRows(rows))
	return b.String()
}

// writeCapacityHTML writes the section: the answer, level against TTFT p95
// and against throughput with the capacity marked, and the windows' table.
func writeCapacityHTML(b *bytes.Buffer, c *runrecord.Capacity) {
	if c == nil {
		return
	}
	fmt.Fprintf(b, `<h2>Capacity at the objectives</h2><p class="sub" id="capacity-answer">%s</p>`, html.EscapeString(capacityAnswer(c)))
	if c.Disagreement != "" {
		fmt.Fprintf(b, `<p class="sub">Instances disagreed: %s</p>`, html.EscapeString(c.Disagreement))
	}
	for _, in := range c.Instances {
		fmt.Fprintf(b, `<p class="sub">%s</p>`, html.EscapeString(capacityInstanceLine(in, c.Unit)))
	}
	b.WriteString(`<div class="charts">`)
	for _, ch := range capacityCharts(c) {
		b.WriteString(ch.svg())
	}
	b.WriteString(`</div>`)
	cols, rows := capacityTable(c)
	writeTableHTML(b, "capacity", cols, rows)
}

// capacityCharts plots each window's level against its TTFT p95 and its
// throughput, passing and failing windows apart, with the capacity found
// drawn as a dashed vertical line (the boundary's low side).
func capacityCharts(c *runrecord.Capacity) []chart {
	var passTTFT, failTTFT, tokens, goodput []point
	maxTTFT, maxRate := 0.0, 0.0
	for _, w := range c.Windows {
		if p := w.TTFT.P95; p != nil {
			if w.Verdict == "pass" {
				passTTFT = append(passTTFT, point{w.Level, *p})
			} else {
				failTTFT = append(failTTFT, point{w.Level, *p})
			}
			maxTTFT = max(maxTTFT, *p)
		}
		if v := w.OutputTokensSec; v != nil {
			tokens = append(tokens, point{w.Level, *v})
			maxRate = max(maxRate, *v)
		}
		if v := w.Goodput; v != nil {
			goodput = append(goodput, point{w.Level, *v})
		}
	}
	sortPoints(passTTFT, failTTFT, tokens, goodput)
	levelTick := func(v float64) string { return fmtLevel(v) }
	ttft := chart{ID: "capacity-ttft", Title: "TTFT p95 by level (each window)", XLabel: "level (" + c.Unit + ")", YLabel: "TTFT p95",
		FmtX: levelTick, FmtY: msTick, WholeX: c.Model == "concurrency",
		Series: []series{{Name: "passed", Points: passTTFT}, {Name: "failed", Points: failTTFT}}}
	rate := chart{ID: "capacity-throughput", Title: "Output tokens/s by level (each window)", XLabel: "level (" + c.Unit + ")", YLabel: "tokens/s",
		FmtX: levelTick, FmtY: numTick, WholeX: c.Model == "concurrency", Series: []series{{Name: "output tokens/s", Points: tokens}}}
	if c.Capacity != nil {
		ttft.Series = append(ttft.Series, capacityMark(*c.Capacity, maxTTFT))
		rate.Series = append(rate.Series, capacityMark(*c.Capacity, maxRate))
	}
	return []chart{ttft, rate}
}

func capacityMark(level, top float64) series {
	return series{Name: "capacity " + fmtLevel(level), Dashed: true, Points: []point{{level, 0}, {level, top}}}
}

// sortPoints orders each series by level: the search visits levels out of
// order, and a line is drawn through its points in turn.
func sortPoints(all ...[]point) {
	for _, ps := range all {
		slices.SortStableFunc(ps, func(a, b point) int { return cmp.Compare(a.X, b.X) })
	}
}

// capacityInstanceLine is one instance's answer in a merged record, with the
// levels its windows ran.
func capacityInstanceLine(in runrecord.CapacityInstance, unit string) string {
	levels := make([]string, len(in.Levels))
	for i, v := range in.Levels {
		levels[i] = fmtLevel(v)
	}
	return fmt.Sprintf("instance %s: %s, capacity %s %s, levels %s", in.Segment, strings.ReplaceAll(in.Outcome, "_", " "),
		fmtOptLevel(in.Capacity), unit, strings.Join(levels, ", "))
}
