package report

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"strings"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// A merged run exists only as a record (there is no collector behind it), so
// it is rendered from the record: the same category and latency tables as a
// single run's report, then the instances it was made of.

func recordRate(num, den uint64) float64 { return ratio(float64(num), float64(den)) }

func recordQ50(cr *runrecord.CategoryRecord, m record.Dist) float64 {
	if mr := cr.Metrics[m.String()]; mr != nil && mr.Count > 0 {
		return mr.P50
	}
	return math.NaN()
}

func recordHitRate(cr *runrecord.CategoryRecord) float64 {
	if cr.CacheHitRate == nil {
		return math.NaN()
	}
	return *cr.CacheHitRate
}

func instancesSummary(rec *runrecord.Record) string {
	segs := make([]string, 0, len(rec.Instances))
	for _, in := range rec.Instances {
		segs = append(segs, runrecord.SegmentName(in.Segment))
	}
	return fmt.Sprintf("merged from %d instances (segments %s)", len(rec.Instances), strings.Join(segs, ", "))
}

// RenderRecordText is the text report of a (merged) run record.
func RenderRecordText(rec *runrecord.Record) string {
	var b strings.Builder
	cats := sortedCategories(rec)
	all := rec.Categories[runrecord.AllCategories]
	if all == nil {
		all = &runrecord.CategoryRecord{}
	}
	fmt.Fprintf(&b, "\n█ LLM streams — %s: %d calls, %s\n\n", instancesSummary(rec), all.Requests, runLength(rec))
	if i := rec.Interrupted; i != nil {
		fmt.Fprintf(&b, "  ⚠ %s\n\n", i.Describe())
	}
	if ex := rec.Excluded; ex != nil && ex.Summary() != "" {
		fmt.Fprintf(&b, "  %s\n\n", ex.Summary())
	}
	b.WriteString(recordDispatchText(rec))
	w := len("category")
	for _, c := range cats {
		w = min(max(w, len(c)), 32)
	}
	fmt.Fprintf(&b, "  %-*s %9s %7s %10s %9s %7s  %s\n", w, "category", "requests", "failed", "tok/s p50", "cache hit", "stalls", "errors")
	for _, cat := range cats {
		cr := rec.Categories[cat]
		fmt.Fprintf(&b, "  %-*s %9d %7s %10s %9s %7d  %s\n", w, cat, cr.Requests, fmtPct(recordRate(cr.Failures, cr.Requests)),
			fmtMetric(record.DistTokensPerSec, recordQ50(cr, record.DistTokensPerSec)), fmtPct(recordHitRate(cr)), cr.Stalls, errorList(cr.Errors))
	}
	if line := finishOmittedLine(all.FinishOmitted); line != "" {
		fmt.Fprintf(&b, "\n  %s\n", line)
	}
	var lines []latencyLine
	for _, m := range textMetrics {
		for _, cat := range cats {
			if mr := rec.Categories[cat].Metrics[m.String()]; mr != nil && mr.Count > 0 {
				lines = append(lines, latencyLine{m, cat, mr.Sketch})
			}
		}
	}
	writeLatencyLines(&b, lines, "category", w)
	writeSlowestText(&b, recordSlowestRows(rec, cats), "category", w)
	b.WriteString(serverText(nil, rec.Server, recordServerChanges(rec)))
	b.WriteString(recordSectionsText(rec))
	writeComparisonText(&b, rec.Comparison)
	for _, f := range rec.Findings { // the whole test's diagnosis (DiagnoseRecord, mergedCountFindings)
		fmt.Fprintf(&b, "\n  [%s] %s\n", f.ID, f.Title)
		for _, e := range f.Evidence {
			fmt.Fprintf(&b, "      · %s\n", e)
		}
	}
	b.WriteString("\n  instances:\n")
	for _, in := range rec.Instances {
		fmt.Fprintf(&b, "    %-10s %8d calls  %s  findings: %s\n", runrecord.SegmentName(in.Segment), in.Requests, in.Source, findingIDs(in.Findings))
	}
	if rec.StageNote != "" {
		fmt.Fprintf(&b, "\n  %s\n", rec.StageNote)
	}
	return b.String()
}

// recordServerChanges are the servers' figures against the baseline, when
// the record was compared with one.
func recordServerChanges(rec *runrecord.Record) []runrecord.ServerChange {
	if rec.Comparison == nil {
		return nil
	}
	return rec.Comparison.Server
}

func findingIDs(fs []runrecord.Finding) string {
	if len(fs) == 0 {
		return "none"
	}
	ids := make([]string, len(fs))
	for i, f := range fs {
		ids[i] = f.ID
	}
	return strings.Join(ids, ", ")
}

// RenderRecordHTML is the one-page HTML report of a (merged) run record.
func RenderRecordHTML(rec *runrecord.Record, title string) []byte {
	var b bytes.Buffer
	if title == "" {
		title = "LLM streaming report"
	}
	all := rec.Categories[runrecord.AllCategories]
	if all == nil {
		all = &runrecord.CategoryRecord{}
	}
	fmt.Fprintf(&b, "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>%s</title><style>%s</style></head><body>\n",
		html.EscapeString(title), htmlStyle)
	fmt.Fprintf(&b, "<h1>%s</h1><p class=\"sub\">%s · %d calls · %s</p>\n", html.EscapeString(title),
		html.EscapeString(instancesSummary(rec)), all.Requests, runLength(rec))
	writeInterruptionHTML(&b, rec.Interrupted)
	if ex := rec.Excluded; ex != nil && ex.Summary() != "" {
		fmt.Fprintf(&b, "<p class=\"sub\">%s</p>\n", html.EscapeString(ex.Summary()))
	}
	for _, f := range rec.Findings {
		fmt.Fprintf(&b, "<div class=\"finding\"><b>%s</b> %s", html.EscapeString(f.ID), html.EscapeString(f.Title))
		for _, e := range f.Evidence {
			fmt.Fprintf(&b, "<br>· %s", html.EscapeString(e))
		}
		b.WriteString("</div>\n")
	}
	cats := sortedCategories(rec)
	b.WriteString(`<h2>Categories</h2><table id="categories"><tr><th>category</th><th>requests</th><th>failed</th><th>tok/s p50</th><th>cache hit</th><th>stalls</th><th>errors</th></tr>` + "\n")
	for _, cat := range cats {
		cr := rec.Categories[cat]
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%d</td><td>%s</td></tr>\n",
			html.EscapeString(cat), cr.Requests, fmtPct(recordRate(cr.Failures, cr.Requests)),
			fmtMetric(record.DistTokensPerSec, recordQ50(cr, record.DistTokensPerSec)), fmtPct(recordHitRate(cr)), cr.Stalls, html.EscapeString(errorList(cr.Errors)))
	}
	b.WriteString("</table>\n")
	b.WriteString(`<h2>Latency</h2><div class="wide"><table id="latency"><tr><th>metric</th><th>category</th><th>mean</th><th>p50</th><th>p95</th><th>p99</th><th>n</th></tr>` + "\n")
	starred := false
	for _, m := range textMetrics {
		for _, cat := range cats {
			mr := rec.Categories[cat].Metrics[m.String()]
			if mr == nil || mr.Count == 0 {
				continue
			}
			cells := []string{htmlQuantile(m, mr.Sketch, 0.5), htmlQuantile(m, mr.Sketch, 0.95), htmlQuantile(m, mr.Sketch, 0.99)}
			if !perCall(m) {
				cells = []string{fmtMS(mr.P50), fmtMS(mr.P95), fmtMS(mr.P99)}
			}
			starred = starred || strings.Contains(strings.Join(cells, ""), `class="few"`)
			fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%d</td></tr>\n",
				m.String(), html.EscapeString(cat), fmtMS(mr.Mean), cells[0], cells[1], cells[2], mr.Count)
		}
	}
	b.WriteString("</table></div>\n")
	writeLegendHTML(&b, "latency-legend", intervalLegend(starred, true))
	writeSlowestHTML(&b, recordSlowestRows(rec, cats), "category")
	writeServerHTML(&b, nil, rec.Server)
	writeRecordSectionsHTML(&b, rec)
	writeParetoHTML(&b, rec.Pareto)
	if rec.Comparison != nil {
		writeComparisonHTML(&b, rec.Comparison)
	}
	b.WriteString(`<h2>Instances</h2><table id="instances"><tr><th>segment</th><th>calls</th><th>record</th><th>findings on its share</th></tr>` + "\n")
	for _, in := range rec.Instances {
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%d</td><td>%s</td><td>%s</td></tr>\n", html.EscapeString(runrecord.SegmentName(in.Segment)),
			in.Requests, html.EscapeString(in.Source), html.EscapeString(findingIDs(in.Findings)))
	}
	b.WriteString("</table>\n")
	if rec.StageNote != "" {
		fmt.Fprintf(&b, "<p class=\"sub\">%s</p>\n", html.EscapeString(rec.StageNote))
	}
	b.WriteString("</body></html>\n")
	return b.Bytes()
}

// runLength is the span of the merged run, to the tenth of a second (short
// CI runs would read "0s" to the second).
func runLength(rec *runrecord.Record) time.Duration {
	return rec.End.Sub(rec.Start).Round(100 * time.Millisecond)
}

// recordSlowestRows are a record's categories with their slowest calls, as
// the slowest-calls tables read them.
func recordSlowestRows(rec *runrecord.Record, cats []string) []summaryRow {
	rows := make([]summaryRow, 0, len(cats))
	for _, cat := range cats {
		rows = append(rows, summaryRow{label: cat, g: &Group{Slowest: rec.Categories[cat].Slowest}})
	}
	return rows
}
