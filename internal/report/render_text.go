package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// textMetrics are the latency rows of the text summary, in reading order.
var textMetrics = []Metric{MetricTTFT, MetricTTFTAnswer, MetricE2E, MetricGap, MetricTPOT} //nolint:gochecknoglobals // read-only table

// RenderText is the compact LLM section appended to k6's own end-of-test
// summary: one row per category plus "all", every figure from the sketches,
// so no threshold has to name a tag for it to appear.
func RenderText(r *Run, findings []Finding, cmp *Comparison) string {
	var b strings.Builder
	if r == nil {
		return ""
	}
	cats := append(r.Categories(), AllCategories)
	all := r.Category(AllCategories)
	fmt.Fprintf(&b, "\n█ LLM streams — where the time went (%d calls, %s, models: %s)\n\n",
		all.Requests, r.Duration().Round(1e9), strings.Join(nonEmpty(r.Models()), ", "))
	if ex := r.Excluded.Summary(); ex != "" {
		fmt.Fprintf(&b, "  %s\n\n", ex)
	}
	if all.Requests == 0 {
		b.WriteString("  no LLM calls were recorded\n")
		return b.String()
	}
	w := catWidth(cats)
	fmt.Fprintf(&b, "  %-*s %9s %7s %10s %9s %7s  %s\n", w, "category", "requests", "failed", "tok/s p50", "cache hit", "stalls", "errors")
	for _, cat := range cats {
		g := r.Category(cat)
		fmt.Fprintf(&b, "  %-*s %9d %7s %10s %9s %7d  %s\n", w, cat, g.Requests, fmtPct(g.FailureRate()),
			fmtMetric(MetricTokensPerSec, q50(g.S(MetricTokensPerSec))), fmtPct(g.CacheHitRate()), g.Stalls, errorList(g.Errors))
	}
	fmt.Fprintf(&b, "\n  %-12s %-*s %9s %9s %9s %9s %8s\n", "metric", w, "category", "mean", "p50", "p95", "p99", "n")
	for _, m := range textMetrics {
		for _, cat := range cats {
			s := r.Category(cat).S(m)
			if s.Count() == 0 {
				continue
			}
			fmt.Fprintf(&b, "  %-12s %-*s %9s %9s %9s %9s %8d\n", m.String(), w, cat,
				fmtMS(s.Mean()), fmtMS(s.Quantile(0.5)), fmtMS(s.Quantile(0.95)), fmtMS(s.Quantile(0.99)), s.Count())
		}
	}
	if stages := r.Stages(); len(stages) > 1 {
		fmt.Fprintf(&b, "\n  %-12s %9s %9s %9s %10s %12s\n", "stage (VUs)", "calls", "TTFT p50", "TTFT p95", "tok/s p50", "out tok/s")
		for _, st := range stages {
			fmt.Fprintf(&b, "  %-12s %9d %9s %9s %10s %12.1f\n", fmtConc(st.Concurrency), st.Calls,
				fmtMS(q50(st.All.S(MetricTTFT))), fmtMS(st.All.S(MetricTTFT).Quantile(0.95)),
				fmtMetric(MetricTokensPerSec, q50(st.All.S(MetricTokensPerSec))), st.OutputTokensPerSec)
		}
	}
	if waves := r.Waves(); len(waves) > 0 {
		fmt.Fprintf(&b, "\n  waves (recovered: TTFT P50 back within %.0f%%, or %s, of its level before the burst):\n", 100*RecoveryMargin, fmtMS(recoveryFloorMS))
		for _, w := range waves {
			fmt.Fprintf(&b, "    %s\n", w.Describe(r.Timeline.Origin))
		}
	}
	if note := r.StageNote(); note != "" {
		fmt.Fprintf(&b, "\n  stages: %s\n", note)
	}
	b.WriteString("\n  diagnosis: ")
	if len(findings) == 0 {
		b.WriteString("nothing stands out (docs/guide.md says what each rule looks for)\n")
	} else {
		b.WriteString("\n")
		for _, f := range findings {
			fmt.Fprintf(&b, "  [%s] %s\n", f.ID, f.Title)
			for _, e := range f.Evidence {
				fmt.Fprintf(&b, "      · %s\n", e)
			}
			fmt.Fprintf(&b, "      → %s\n", f.Advice)
		}
	}
	writeComparisonText(&b, cmp)
	return b.String()
}

func writeComparisonText(b *strings.Builder, cmp *Comparison) {
	if cmp == nil {
		return
	}
	if len(cmp.Rows) == 0 {
		b.WriteString("\n  baseline: no category in common with the baseline record\n")
		return
	}
	var changed []ComparisonRow
	for _, row := range cmp.Rows {
		if row.Verdict != VerdictSame {
			changed = append(changed, row)
		}
	}
	fmt.Fprintf(b, "\n  baseline (%s): %d of %d figures changed significantly (%.0f%% bootstrap CI, ≥%.0f%% effect)\n",
		cmp.BaselineStart.Format("2006-01-02 15:04"), len(changed), len(cmp.Rows), 100*cmp.Confidence, 100*minEffect)
	sort.SliceStable(changed, func(i, j int) bool { return math.Abs(changed[i].DeltaPct) > math.Abs(changed[j].DeltaPct) })
	for _, row := range changed {
		fmt.Fprintf(b, "    %-7s %-14s %-6s %-4s %9s → %-9s %+7.1f%%  CI [%s, %s]\n", row.Verdict, row.Category, row.Metric,
			row.Stat, fmtMS(row.Baseline), fmtMS(row.Current), 100*row.DeltaPct, fmtSigned(row.CILow), fmtSigned(row.CIHigh))
	}
}

func fmtSigned(v float64) string {
	if v >= 0 {
		return "+" + fmtMS(v)
	}
	return "-" + fmtMS(-v)
}

func errorList(m map[string]uint64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] || (m[keys[i]] == m[keys[j]] && keys[i] < keys[j]) })
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s:%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}

func catWidth(cats []string) int {
	w := len("category")
	for _, c := range cats {
		w = max(w, len(c))
	}
	return min(w, 24)
}

func nonEmpty(s []string) []string {
	return slices.DeleteFunc(slices.Clone(s), func(v string) bool { return v == "" })
}
