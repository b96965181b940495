package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/compare"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
)

// textMetrics are the latency rows of the text summary, in reading order:
// the distributions whose rows ask for it (record.Keep.Latency).
var textMetrics = latencyDists() //nolint:gochecknoglobals // derived once from the figure table

func latencyDists() []record.Dist {
	var out []record.Dist
	for _, d := range record.Dists {
		if d.Row().Keep.Latency {
			out = append(out, d)
		}
	}
	return out
}

// RenderText is the compact LLM section appended to k6's own end-of-test
// summary: one row per category plus "all", every figure from the sketches,
// so no threshold has to name a tag for it to appear.
func RenderText(r *Run, findings []runrecord.Finding, cmp *runrecord.Comparison) string {
	var b strings.Builder
	if r == nil {
		return ""
	}
	all := r.Category(runrecord.AllCategories)
	writeTextHeadline(&b, r, findings)
	if all.Requests == 0 {
		b.WriteString("  no LLM calls were recorded\n")
		return b.String()
	}
	writeTextNotes(&b, r, all)
	rows := summaryRows(r)
	w := 8
	for _, row := range rows {
		w = max(w, len(row.label))
	}
	w = min(w, 32)
	writeSummaryText(&b, rows, rowHeading(r), w)
	writeCostText(&b, rows, rowHeading(r), w)
	for _, line := range finishOmittedLines(r) {
		fmt.Fprintf(&b, "\n  %s\n", line)
	}
	writeLatencyText(&b, rows, rowHeading(r), w)
	writeSlowestText(&b, rows, rowHeading(r), w)
	writeRoutesText(&b, r)
	forEachView(r, func(label string, v *Run) { writeStagesText(&b, label, v) })
	writePairedText(&b, r)
	writeFindingsText(&b, findings)
	writeComparisonText(&b, cmp)
	return b.String()
}

// writeTextHeadline writes the section's title line, what the report left
// out, and the headline of a run whose calls all failed (no figure below
// would say why).
func writeTextHeadline(b *strings.Builder, r *Run, findings []runrecord.Finding) {
	all := r.Category(runrecord.AllCategories)
	fmt.Fprintf(b, "\n█ LLM streams — where the time went (%d calls, %s, models: %s)\n\n",
		all.Requests, r.Duration().Round(1e9), strings.Join(nonEmpty(r.Models()), ", "))
	if i := r.Interruption(); i != nil {
		fmt.Fprintf(b, "  ⚠ %s\n\n", i.Describe())
	}
	if ex := r.Excluded.Summary(); ex != "" {
		fmt.Fprintf(b, "  %s\n\n", ex)
	}
	for _, f := range findings {
		if f.ID == "all_failed" {
			fmt.Fprintf(b, "  %s\n\n", f.Title)
		}
	}
}

// writeTextNotes writes what a reader must know before the tables: the gap
// sample's cap and the schedule's dispatch delay.
func writeTextNotes(b *strings.Builder, r *Run, all *Group) {
	if line := gapSampleNote(all, r.Timeline); line != "" {
		fmt.Fprintf(b, "  %s\n\n", line)
	}
	if lines := r.dispatchLines(); len(lines) > 0 {
		for _, l := range lines {
			fmt.Fprintf(b, "  %s\n", l)
		}
		b.WriteString("\n")
	}
}

// writeSummaryText is the table of calls, failures, pace, cache and errors per row.
func writeSummaryText(b *strings.Builder, rows []summaryRow, heading string, w int) {
	fmt.Fprintf(b, "  %-*s %9s %7s %10s %9s %7s  %s\n", w, heading, "requests", "failed", "tok/s p50", "cache hit", "stalls", "errors")
	for _, row := range rows {
		g := row.g
		fmt.Fprintf(b, "  %-*s %9d %7s %10s %9s %7d  %s\n", w, row.label, g.Requests, fmtPct(g.FailureRate()),
			fmtMetric(record.DistTokensPerSec, q50(g.S(record.DistTokensPerSec))), fmtPct(g.CacheHitRate()), g.Stalls, errorList(g.Errors))
	}
}

// writeLatencyText is the table of each latency's mean and quantiles per
// row, each quantile with its interval.
func writeLatencyText(b *strings.Builder, rows []summaryRow, heading string, w int) {
	var lines []latencyLine
	for _, m := range textMetrics {
		for _, row := range rows {
			if s := row.g.S(m); s.Count() > 0 {
				lines = append(lines, latencyLine{m, row.label, s})
			}
		}
	}
	writeLatencyLines(b, lines, heading, w)
}

// latencyLine is one row of the latency table: a distribution of a row's calls.
type latencyLine struct {
	m     record.Dist
	label string
	s     *sketch.Sketch
}

// writeLatencyLines writes the latency table (a run's or a merged
// record's) and the legend of its intervals.
func writeLatencyLines(b *strings.Builder, lines []latencyLine, heading string, w int) {
	fmt.Fprintf(b, "\n  %-14s %-*s %9s %18s %18s %18s %8s\n", "metric", w, heading, "mean", "p50", "p95", "p99", "n")
	starred, pooled := false, false
	for _, l := range lines {
		cells := []string{fmtMS(l.s.Quantile(0.5)), fmtMS(l.s.Quantile(0.95)), fmtMS(l.s.Quantile(0.99))}
		if perCall(l.m) {
			cells = []string{fmtQuantileMS(l.s, 0.5), fmtQuantileMS(l.s, 0.95), fmtQuantileMS(l.s, 0.99)}
		} else {
			pooled = true
		}
		starred = starred || anyStarred(cells)
		fmt.Fprintf(b, "  %-14s %-*s %9s %18s %18s %18s %8d\n", l.m.String(), w, l.label, fmtMS(l.s.Mean()), cells[0], cells[1], cells[2], l.s.Count())
	}
	for _, line := range intervalLegend(starred, pooled) {
		fmt.Fprintf(b, "  %s\n", line)
	}
}

// writeStagesText writes one view's load stages, its waves, or why it has none.
func writeStagesText(b *strings.Builder, label string, v *Run) {
	if stages := v.Stages(); len(stages) > 1 {
		fmt.Fprintf(b, "\n  %-12s %9s %18s %18s %20s %12s  %s\n", "stage ("+stages[0].Unit()+")", "calls", "TTFT p50", "TTFT p95", "tok/s p50", "out tok/s", label)
		starred := false
		for _, st := range stages {
			cells := []string{fmtQuantileMS(st.All.S(record.DistTTFT), 0.5), fmtQuantileMS(st.All.S(record.DistTTFT), 0.95),
				fmtQuantile(record.DistTokensPerSec, st.All.S(record.DistTokensPerSec), 0.5)}
			starred = starred || anyStarred(cells)
			fmt.Fprintf(b, "  %-12s %9d %18s %18s %20s %12.1f\n", runrecord.FormatConc(st.Concurrency), st.Calls,
				cells[0], cells[1], cells[2], st.OutputTokensPerSec)
		}
		if starred {
			fmt.Fprintf(b, "  %s\n", tooFewLegend())
		}
	}
	if waves := v.Waves(); len(waves) > 0 {
		fmt.Fprintf(b, "\n  waves%s (recovered: TTFT P50 back within %.0f%%, %s or one decode step of its level before the burst):\n",
			suffix(label), 100*RecoveryMargin, fmtMS(recoveryFloorMS))
		for _, w := range waves {
			fmt.Fprintf(b, "    %s\n", w.Describe(v.Timeline.Origin))
		}
	}
	if note := v.StageNote(); note != "" {
		fmt.Fprintf(b, "\n  stages%s: %s\n", suffix(label), note)
	}
}

// writeFindingsText writes the diagnosis: each finding with its evidence and advice.
func writeFindingsText(b *strings.Builder, findings []runrecord.Finding) {
	b.WriteString("\n  diagnosis: ")
	if len(findings) == 0 {
		b.WriteString("nothing stands out (docs/guide.md says what each rule looks for)\n")
		return
	}
	b.WriteString("\n")
	for _, f := range findings {
		fmt.Fprintf(b, "  [%s] %s\n", f.ID, f.Title)
		for _, e := range f.Evidence {
			fmt.Fprintf(b, "      · %s\n", e)
		}
		fmt.Fprintf(b, "      → %s\n", f.Advice)
	}
}

func writeComparisonText(b *strings.Builder, cmp *runrecord.Comparison) {
	if cmp == nil {
		return
	}
	if d := cmp.DifferencesLine(); d != "" {
		fmt.Fprintf(b, "\n  ⚠ %s\n", d)
	}
	if d := cmp.ConfoundedLine(); d != "" {
		fmt.Fprintf(b, "\n  ⚠ %s\n", d)
	}
	writeServerChangesText(b, cmp.Server)
	writeCapacityChangeText(b, cmp.Capacity)
	writeJobChangesText(b, cmp.Jobs)
	if len(cmp.Rows) == 0 {
		b.WriteString("\n  baseline: no category in common with the baseline record\n")
		return
	}
	var changed []runrecord.ComparisonRow
	for _, row := range cmp.Rows {
		if row.Verdict == runrecord.VerdictBetter || row.Verdict == runrecord.VerdictWorse {
			changed = append(changed, row)
		}
	}
	tooFew := tooFewGroups(cmp.Rows)
	fmt.Fprintf(b, "\n  baseline (%s): %d of %d figures changed significantly (%.0f%% bootstrap CI, ≥%.0f%% effect)%s\n",
		cmp.BaselineStart.Format("2006-01-02 15:04"), len(changed), len(cmp.Rows), 100*cmp.Confidence, 100*compare.MinEffect,
		tooFewCount(cmp.Rows))
	sort.SliceStable(changed, func(i, j int) bool { return math.Abs(changed[i].DeltaPct) > math.Abs(changed[j].DeltaPct) })
	w := 7
	for _, row := range changed {
		w = max(w, len([]rune(shownVerdict(row.Verdict, cmp))))
	}
	for _, row := range changed {
		fmt.Fprintf(b, "    %-*s %-14s %-6s %-4s %9s → %-9s %+7.1f%%  CI [%s, %s]\n", w, shownVerdict(row.Verdict, cmp), row.Label(), row.Metric,
			row.Stat, fmtMS(row.Baseline), fmtMS(row.Current), 100*row.DeltaPct, fmtSigned(row.CILow), fmtSigned(row.CIHigh))
	}
	for _, g := range tooFew {
		fmt.Fprintf(b, "    %s %s: %s (%s)\n", runrecord.VerdictTooFew, g.label, strings.Join(g.figures, ", "), g.why())
	}
}

func nonEmpty(s []string) []string {
	return slices.DeleteFunc(slices.Clone(s), func(v string) bool { return v == "" })
}

func writePairedText(b *strings.Builder, r *Run) {
	for _, pc := range r.Paired() {
		fmt.Fprintf(b, "\n  paired: %s vs %s on the same dataset items (%d pairs; difference = %s − %s)\n",
			runrecord.ClientLabel(pc.A), runrecord.ClientLabel(pc.B), pc.Pairs, runrecord.ClientLabel(pc.B), runrecord.ClientLabel(pc.A))
		for _, row := range pc.Rows {
			fmt.Fprintf(b, "    %s\n", describePair(row, pc))
		}
	}
}

// describe is a row in one line of text.
func describePair(row runrecord.PairedRow, pc runrecord.PairedComparison) string {
	f := func(v float64) string { return fmtMS(v) }
	sf := fmtSigned
	if row.Metric == "tokens_per_sec" {
		f = func(v float64) string { return fmt.Sprintf("%.1f/s", v) }
		sf = func(v float64) string { return fmt.Sprintf("%+.1f/s", v) }
	}
	if row.Pairs < pairMin {
		return fmt.Sprintf("%-14s %d pairs: too few to compare", row.Metric, row.Pairs)
	}
	return fmt.Sprintf("%-14s %s %s vs %s %s: median difference %s (%+.1f%%), 95%% CI [%s, %s], %d pairs → %s",
		row.Metric, pc.A, f(row.MedianA), pc.B, f(row.MedianB), sf(row.MedianDiff), 100*row.RelDiff,
		sf(row.CILow), sf(row.CIHigh), row.Pairs, row.Verdict)
}

// finishOmittedLine is the report's line about n answers without a finish
// reason ("" when there were none).
func finishOmittedLine(n uint64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d answers ended without a finish reason: the server or a gateway omits it", n)
}

// finishOmittedLines are the report's lines about answers without a finish
// reason: one per client that had any (with several clients, each named).
func finishOmittedLines(r *Run) []string {
	var lines []string
	forEachView(r, func(label string, v *Run) {
		if line := finishOmittedLine(v.Category(runrecord.AllCategories).FinishOmitted); line != "" {
			lines = append(lines, line+suffix(label))
		}
	})
	return lines
}
