package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
)

// Render produces the three outputs of a run at once: the run's record
// (compared with opt.Baseline unless cmp is given), then the text and the
// HTML page of the same figures. The record's comparison is the one
// comparison: the findings and the server section read their changes from it.
func Render(r *Run, cmp *runrecord.Comparison, opt RenderOptions) (text string, htmlDoc, record []byte, err error) {
	if r == nil {
		return "", nil, nil, fmt.Errorf("report: no run to render")
	}
	addCapacityEnergy(r.Capacity, opt.Server)
	rec, err := runRecord(r, nil, cmp, opt)
	if err != nil {
		return "", nil, nil, err
	}
	cmp = rec.Comparison
	findings := opt.Findings
	if findings == nil {
		findings = diagnoseServer(r, opt.Server, Diagnose(r))
		if PartialSegment(opt.Info) {
			// The server counted every instance's calls: llmstream merge
			// holds its count against the whole test's (mergedCountFindings).
			findings = slices.DeleteFunc(findings, func(f runrecord.Finding) bool { return f.ID == "server_count_mismatch" })
		}
		findings = comparisonFindings(cmp, findings)
	}
	if findings == nil {
		findings = []runrecord.Finding{}
	}
	opt.Findings, rec.Findings = findings, findings
	var nonFinite []string
	if record, nonFinite, err = encodeRecord(rec); err != nil {
		return "", nil, nil, err
	}
	var serverChanges []runrecord.ServerChange
	if cmp != nil {
		serverChanges = cmp.Server
	}
	text = RenderText(r, findings, cmp) + serverText(r, opt.Server, serverChanges) + sectionsText(r)
	if note := runrecord.NonFiniteNote(nonFinite); note != "" {
		text += "\n  ⚠ " + note + "\n"
	}
	return text, RenderHTML(r, cmp, opt), record, nil
}

const htmlStyle = `
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px auto;max-width:1180px;color:#111827;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #e5e7eb;padding-bottom:4px}
.sub{color:#6b7280;margin:0 0 16px}
table{border-collapse:collapse;font-variant-numeric:tabular-nums;margin:6px 0}
th,td{padding:3px 7px;font-size:13px;border-bottom:1px solid #f3f4f6;text-align:right}th{background:#f9fafb;font-weight:600}
td:first-child,th:first-child{text-align:left}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(540px,1fr));gap:12px}
svg.chart{width:100%;height:auto;background:#fff;border:1px solid #e5e7eb;border-radius:6px}
svg .plot{fill:#fcfcfd;stroke:#d1d5db}svg .grid{stroke:#eef0f3}svg .tick{font-size:10px;fill:#6b7280}
svg .axis{font-size:11px;fill:#374151}svg .title{font-size:13px;font-weight:600;fill:#111827}
svg .legend{font-size:10px;fill:#374151}svg .empty{font-size:13px;fill:#9ca3af;text-anchor:middle}
.finding{border-left:4px solid #f59e0b;background:#fffbeb;padding:8px 12px;margin:8px 0;border-radius:4px}
.finding.info{border-color:#3b82f6;background:#eff6ff}.finding code{font-weight:600}
.finding ul{margin:4px 0 4px 18px;padding:0}.advice{margin:4px 0 0}
.worse{color:#b91c1c;font-weight:600}.better{color:#15803d;font-weight:600}.same{color:#6b7280}
.ok{color:#15803d}.wide{overflow-x:auto;max-width:100%}
.ci{color:#6b7280;font-size:11px}.few{color:#b45309;font-weight:600}.confounded{color:#b45309;font-weight:600}
.tables{display:flex;flex-wrap:wrap;gap:4px 28px;align-items:flex-start}caption{text-align:left;font-weight:600;font-size:13px;padding:6px 0 2px}
.placeholder{grid-column:1/-1;color:#6b7280;background:#f9fafb;border:1px dashed #d1d5db;border-radius:6px;padding:14px 16px;margin:6px 0}pre{background:#f9fafb;padding:8px;border-radius:4px;overflow:auto;font-size:12px}
`

// RenderHTML writes one self-contained page: inline CSS and SVG, no script,
// no external resource. Every chart is an <svg class="chart"> with a stable id.
func RenderHTML(r *Run, cmp *runrecord.Comparison, opt RenderOptions) []byte {
	var b bytes.Buffer
	if r == nil {
		return nil
	}
	findings := opt.Findings
	if findings == nil {
		findings = Diagnose(r)
	}
	writeHTMLHead(&b, r, opt.Title)
	rows := summaryRows(r)
	writeSummaryHTML(&b, rows, rowHeading(r))
	for _, line := range finishOmittedLines(r) {
		fmt.Fprintf(&b, "<p class=\"sub finish-omitted\">%s</p>\n", html.EscapeString(line))
	}
	writeCostHTML(&b, rows, rowHeading(r))
	writeLatencyHTML(&b, rows, rowHeading(r))
	writeSlowestHTML(&b, rows, rowHeading(r))
	writeRoutesHTML(&b, r)
	writePairedHTML(&b, r)
	writeServerHTML(&b, r, opt.Server)
	writeSectionsHTML(&b, r)
	writeFindingsHTML(&b, findings)
	if cmp != nil {
		writeComparisonHTML(&b, cmp)
	}
	writeChartsHTML(&b, r)
	writeParetoHTML(&b, runPareto(r))
	if len(opt.Meta) > 0 {
		meta, err := json.MarshalIndent(opt.Meta, "", "  ")
		if err == nil {
			fmt.Fprintf(&b, "<h2>Run metadata</h2><pre id=\"meta\">%s</pre>\n", html.EscapeString(string(meta)))
		}
	}
	b.WriteString("</body></html>\n")
	return b.Bytes()
}

// writeHTMLHead opens the page: its style, title, the run's calls, start,
// length and models, and what the report left out.
func writeHTMLHead(b *bytes.Buffer, r *Run, title string) {
	if title == "" {
		title = "LLM load test — where the time went"
	}
	all := r.Category(runrecord.AllCategories)
	esc := html.EscapeString
	fmt.Fprintf(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>%s</title><style>%s</style></head><body>\n", esc(title), htmlStyle)
	fmt.Fprintf(b, "<h1>%s</h1><p class=\"sub\">%d calls · %s · %s · models: %s</p>\n", esc(title), all.Requests,
		esc(r.First.UTC().Format(time.RFC3339)), esc(r.Duration().Round(time.Second).String()), esc(strings.Join(nonEmpty(r.Models()), ", ")))
	writeInterruptionHTML(b, r.Interruption())
	if ex := r.Excluded.Summary(); ex != "" {
		fmt.Fprintf(b, "<p class=\"sub\" id=\"excluded\">%s</p>\n", esc(ex))
	}
}

// writeInterruptionHTML says, under the title, that the run was stopped
// before its planned end (nothing when it ran to it).
func writeInterruptionHTML(b *bytes.Buffer, i *runrecord.Interruption) {
	if i != nil {
		fmt.Fprintf(b, "<p class=\"finding interrupted\" id=\"interrupted\">⚠ %s</p>\n", html.EscapeString(i.Describe()))
	}
}

// writeSummaryHTML is the table of counts per category (per client and
// category with several clients); each latency's table follows it.
func writeSummaryHTML(b *bytes.Buffer, rows []summaryRow, heading string) {
	esc := html.EscapeString
	fmt.Fprintf(b, `<h2>Per %s</h2><table id="summary"><tr><th>%s</th><th>requests</th><th>failed</th><th>tok/s p50</th><th>cache hit</th><th>stalls</th><th>errors</th></tr>`,
		esc(heading), esc(heading))
	for _, row := range rows {
		g := row.g
		fmt.Fprintf(b, "<tr><td>%s</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%d</td><td>%s</td></tr>\n", esc(row.label), g.Requests,
			fmtPct(g.FailureRate()), fmtMetric(record.DistTokensPerSec, q50(g.S(record.DistTokensPerSec))), fmtPct(g.CacheHitRate()), g.Stalls, esc(errorList(g.Errors)))
	}
	b.WriteString("</table>\n")
}

// writeFindingsHTML is the diagnosis: each finding with its evidence and advice.
func writeFindingsHTML(b *bytes.Buffer, findings []runrecord.Finding) {
	esc := html.EscapeString
	b.WriteString(`<h2>Diagnosis</h2><div id="diagnosis">`)
	if len(findings) == 0 {
		b.WriteString(`<p class="ok">Nothing stands out: no rule found enough evidence.</p>`)
	}
	for _, f := range findings {
		fmt.Fprintf(b, `<div class="finding %s" data-id="%s"><code>[%s]</code> <b>%s</b><ul>`, esc(f.Severity), esc(f.ID), esc(f.ID), esc(f.Title))
		for _, e := range f.Evidence {
			fmt.Fprintf(b, "<li>%s</li>", esc(e))
		}
		fmt.Fprintf(b, `</ul><p class="advice">→ %s</p></div>`, esc(f.Advice))
	}
	b.WriteString("</div>\n")
}

// writeChartsHTML draws the charts: the clients side by side when the run
// had several, then each view's distributions, time series, load stages and
// waves.
func writeChartsHTML(b *bytes.Buffer, r *Run) {
	if r.PerClient() {
		b.WriteString(`<h2>Clients side by side</h2><div class="charts">`)
		b.WriteString(clientCharts(r))
		b.WriteString("</div>\n")
	}
	forEachView(r, func(label string, v *Run) {
		sfx, head := "", ""
		if label != "" {
			sfx, head = "-"+slug(v.ClientName()), " — "+html.EscapeString(label)
		}
		fmt.Fprintf(b, `<h2>Distributions%s</h2><div class="charts">`, head)
		b.WriteString(distributionCharts(v, v.Categories(), sfx))
		fmt.Fprintf(b, "</div>\n<h2>Over time%s</h2><div class=\"charts\">", head)
		b.WriteString(timeCharts(v, sfx))
		fmt.Fprintf(b, "</div>\n<h2>Against concurrency (load stages)%s</h2><div class=\"charts\">", head)
		b.WriteString(stageCharts(v, sfx))
		b.WriteString("</div>\n")
		writeWavesHTML(b, v, sfx, head)
	})
}

// writeLatencyHTML writes one small table per latency (mean, p50, p95, p99
// of each row): five metrics times four figures in one table is wider than a
// page, and small tables side by side wrap onto the next line instead. A
// metric no call measured (the due-time ones without a schedule) has none.
func writeLatencyHTML(b *bytes.Buffer, rows []summaryRow, heading string) {
	b.WriteString(`<div class="tables" id="latency">`)
	starred := false
	for _, m := range textMetrics {
		if !slices.ContainsFunc(rows, func(row summaryRow) bool { return row.g.S(m).Count() > 0 }) {
			continue
		}
		fmt.Fprintf(b, `<table id="latency-%s"><caption>%s</caption><tr><th>%s</th><th>mean</th><th>p50</th><th>p95</th><th>p99</th></tr>`,
			m, html.EscapeString(m.Row().Help), html.EscapeString(heading))
		for _, row := range rows {
			s := row.g.S(m)
			cells := []string{htmlQuantile(m, s, 0.5), htmlQuantile(m, s, 0.95), htmlQuantile(m, s, 0.99)}
			if !perCall(m) {
				cells = []string{fmtMS(s.Quantile(0.5)), fmtMS(s.Quantile(0.95)), fmtMS(s.Quantile(0.99))}
			}
			starred = starred || strings.Contains(strings.Join(cells, ""), `class="few"`)
			fmt.Fprintf(b, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n", html.EscapeString(row.label),
				fmtMS(s.Mean()), cells[0], cells[1], cells[2])
		}
		b.WriteString("</table>")
	}
	b.WriteString("</div>\n")
	writeLegendHTML(b, "latency-legend", intervalLegend(starred, true))
}

// writeLegendHTML writes a table's legend of its intervals.
func writeLegendHTML(b *bytes.Buffer, id string, lines []string) {
	fmt.Fprintf(b, `<p class="sub" id="%s">`, id)
	for i, l := range lines {
		if i > 0 {
			b.WriteString("<br>")
		}
		b.WriteString(html.EscapeString(l))
	}
	b.WriteString("</p>\n")
}

func writeComparisonHTML(b *bytes.Buffer, cmp *runrecord.Comparison) {
	fmt.Fprintf(b, `<h2>Against the baseline of %s</h2>`, html.EscapeString(cmp.BaselineStart.UTC().Format("2006-01-02 15:04")))
	if d := cmp.DifferencesLine(); d != "" {
		b.WriteString(`<div class="finding" id="baseline-differs">` + html.EscapeString(d) + "</div>\n")
	}
	if d := cmp.ConfoundedLine(); d != "" {
		b.WriteString(`<div class="finding" id="baseline-confounded">` + html.EscapeString(d) + "</div>\n")
	}
	fmt.Fprintf(b, `<table id="comparison"><tr><th>category</th><th>metric</th><th>stat</th><th>baseline</th><th>this run</th><th>Δ</th><th>%.0f%% CI of Δ</th><th>verdict</th></tr>`,
		100*cmp.Confidence)
	for _, row := range cmp.Rows {
		ci := "-"
		if row.HasCI {
			ci = fmt.Sprintf("[%s, %s]", fmtSigned(row.CILow), fmtSigned(row.CIHigh))
		}
		verdict := fmt.Sprintf(`<td class="%s">%s</td>`, verdictClass(row.Verdict), html.EscapeString(shownVerdict(row.Verdict, cmp)))
		switch {
		case row.Verdict == runrecord.VerdictTooFew:
			verdict = fmt.Sprintf(`<td class="few" title="%s">%s</td>`, html.EscapeString(tooFewTitle(row)), row.Verdict)
		case shownVerdict(row.Verdict, cmp) != row.Verdict:
			verdict = fmt.Sprintf(`<td class="confounded" title="the runs' prefix caches differed">%s</td>`, html.EscapeString(shownVerdict(row.Verdict, cmp)))
		}
		fmt.Fprintf(b, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%+.1f%%</td><td>%s</td>%s</tr>\n",
			html.EscapeString(row.Label()), row.Metric, row.Stat, fmtMS(row.Baseline), fmtMS(row.Current), 100*row.DeltaPct, ci, verdict)
	}
	b.WriteString("</table>\n")
	writeServerChangesHTML(b, cmp.Server)
	writeCapacityChangeHTML(b, cmp.Capacity)
	writeJobChangesHTML(b, cmp.Jobs)
}

func distributionCharts(r *Run, cats []string, sfx string) string {
	var out strings.Builder
	// TTFT per category.
	var sk []*sketch.Sketch
	for _, c := range cats {
		sk = append(sk, r.Category(c).S(record.DistTTFT))
	}
	lo, hi := histRange(sk...)
	ttft := chart{ID: "ttft-hist" + sfx, Title: "TTFT distribution per category", XLabel: "time to first token (log scale)",
		YLabel: "share of calls", LogX: true, FmtX: msTick, FmtY: share}
	for i, c := range cats {
		ttft.Series = append(ttft.Series, histogramSeries(c, sk[i], lo, hi, 40))
	}
	out.WriteString(ttft.svg())

	all := r.Category(runrecord.AllCategories)
	g := all.S(record.DistGap)
	glo, ghi := histRange(g)
	gap := chart{ID: "gap-hist" + sfx, Title: fmt.Sprintf("Inter-token gaps (%s under 1 ms, longest %s)", fmtPct(all.BurstShare()), fmtMS(all.LongestGapMS)),
		XLabel: "gap between output events (log scale)", YLabel: "share of gaps", LogX: true, FmtX: msTick, FmtY: share,
		Series: []series{histogramSeries("all", g, glo, ghi, 50)}}
	out.WriteString(gap.svg())

	hit, miss := all.S(record.DistTTFTCacheHit), all.S(record.DistTTFTCacheMiss)
	clo, chi := histRange(hit, miss)
	cache := chart{ID: "ttft-cache" + sfx, Title: fmt.Sprintf("TTFT: cache hit (%d) vs miss (%d)", hit.Count(), miss.Count()),
		XLabel: "time to first token (log scale)", YLabel: "share of calls", LogX: true, FmtX: msTick, FmtY: share,
		Series: []series{histogramSeries("hit", hit, clo, chi, 40), histogramSeries("miss", miss, clo, chi, 40)}}
	out.WriteString(cache.svg())
	return out.String()
}

func timeCharts(r *Run, sfx string) string {
	tl := r.Timeline
	secs := func(i int) float64 { return tl.BucketStart(i).Sub(tl.Origin).Seconds() }
	var p50, p95, p99, tps, agg, active, fails, reqs []point
	w := tl.Width.Seconds()
	for i := range tl.Buckets {
		b := &tl.Buckets[i]
		x := secs(i)
		if b.TTFT != nil && b.TTFT.Count() > 0 {
			p50 = append(p50, point{x, b.TTFT.Quantile(0.5)})
			p95 = append(p95, point{x, b.TTFT.Quantile(0.95)})
			p99 = append(p99, point{x, b.TTFT.Quantile(0.99)})
		}
		if b.TokensPerSec != nil && b.TokensPerSec.Count() > 0 {
			tps = append(tps, point{x, b.TokensPerSec.Quantile(0.5)})
		}
		agg = append(agg, point{x, float64(b.OutputTokens) / w})
		active = append(active, point{x, float64(b.ActiveMax)})
		fails = append(fails, point{x, float64(b.Failures) / w})
		reqs = append(reqs, point{x, float64(b.Requests) / w})
	}
	charts := []chart{
		{ID: "ts-ttft" + sfx, Title: "TTFT over time", XLabel: "time into the run", YLabel: "TTFT", FmtX: secTick, FmtY: msTick,
			Series: []series{{Name: "p50", Points: p50}, {Name: "p95", Points: p95}, {Name: "p99", Points: p99, Dashed: true}}},
		{ID: "ts-tps" + sfx, Title: "Decode speed per request (p50) over time", XLabel: "time into the run", YLabel: "tokens/s", FmtX: secTick, FmtY: numTick,
			Series: []series{{Name: "tokens/s per request", Points: tps}}},
		{ID: "ts-throughput" + sfx, Title: "Output tokens per second (all calls)", XLabel: "time into the run", YLabel: "tokens/s", FmtX: secTick, FmtY: numTick,
			Series: []series{{Name: "output tokens/s", Points: agg}}},
		{ID: "ts-active" + sfx, Title: "Streams in flight", XLabel: "time into the run", YLabel: "streams", FmtX: secTick, FmtY: numTick, WholeY: true,
			Series: []series{{Name: "active streams (max)", Points: active}}},
		{ID: "ts-failures" + sfx, Title: "Requests and failures per second", XLabel: "time into the run", YLabel: "per second", FmtX: secTick, FmtY: numTick,
			Series: []series{{Name: "started", Points: reqs}, {Name: "failed", Points: fails}}},
	}
	var out strings.Builder
	for _, c := range charts {
		out.WriteString(c.svg())
	}
	return out.String()
}

func stageCharts(r *Run, sfx string) string {
	stages := r.Stages()
	var t50, t95, tps, thr []point
	for _, st := range stages {
		s := st.All.S(record.DistTTFT)
		t50 = append(t50, point{st.Concurrency, s.Quantile(0.5)})
		t95 = append(t95, point{st.Concurrency, s.Quantile(0.95)})
		tps = append(tps, point{st.Concurrency, q50(st.All.S(record.DistTokensPerSec))})
		thr = append(thr, point{st.Concurrency, st.OutputTokensPerSec})
	}
	var intro string
	if why := r.StageNote(); why != "" {
		intro = `<p id="stage-note` + sfx + `" style="grid-column:1/-1">` + html.EscapeString(why) + "</p>"
	}
	if len(stages) < 2 {
		// One point is no curve: say what would draw one instead of plotting a lone dot.
		return intro + `<p class="placeholder" id="stage-placeholder` + sfx + `">` + html.EscapeString(stagePlaceholder(stages)) + "</p>"
	}
	xLabel, vus := "concurrent VUs (stage)", !stages[0].ByRate
	if !vus {
		xLabel = "arrival rate, requests/s (stage)"
	}
	charts := []chart{
		{ID: "stage-ttft" + sfx, Title: "TTFT against concurrency", XLabel: xLabel, YLabel: "TTFT", FmtX: numTick, FmtY: msTick, WholeX: vus,
			Series: []series{{Name: "p50", Points: t50}, {Name: "p95", Points: t95}}},
		{ID: "stage-tps" + sfx, Title: "Tokens/s against concurrency", XLabel: xLabel, YLabel: "tokens/s", FmtX: numTick, FmtY: numTick, WholeX: vus,
			Series: []series{{Name: "per request (p50)", Points: tps}}},
		{ID: "stage-throughput" + sfx, Title: "Throughput against concurrency", XLabel: xLabel, YLabel: "output tokens/s", FmtX: numTick, FmtY: numTick, WholeX: vus,
			Series: []series{{Name: "all calls", Points: thr}}},
	}
	var out strings.Builder
	out.WriteString(intro)
	for _, c := range charts {
		out.WriteString(c.svg())
	}
	return out.String()
}

// stagePlaceholder stands in for the charts against concurrency when the run
// held fewer than two load stages.
func stagePlaceholder(stages []*Stage) string {
	const how = " Run stages of rising VUs or arrival rate, each held for some seconds (examples/step-load.js), " +
		"to see where latency turns up."
	if len(stages) == 0 {
		return "Needs a step load: no level of load was held long enough to count as a stage." + how
	}
	st := stages[0]
	return fmt.Sprintf("Needs a step load: the whole run was one stage (%s %s: TTFT p50 %s, %s per request, %s output tokens/s), "+
		"and one point draws no curve.", runrecord.FormatConc(runrecord.RoundLevel(st.Concurrency)), runrecord.LevelUnit(st.ByRate),
		fmtMS(q50(st.All.S(record.DistTTFT))), fmtMetric(record.DistTokensPerSec, q50(st.All.S(record.DistTokensPerSec))),
		strconv.FormatFloat(st.OutputTokensPerSec, 'f', 0, 64)) + how
}

func writeWavesHTML(b *bytes.Buffer, r *Run, sfx, head string) {
	waves := r.Waves()
	if len(waves) == 0 {
		return
	}
	fmt.Fprintf(b, `<h2>Waves: recovery after each burst%s</h2><p class="sub">Recovered: the TTFT median is back within %.0f%% `+
		`(or %s, or one decode step) of its level before the burst.</p><table id="waves%s"><tr><th>burst</th><th>load</th><th>TTFT P50 before</th>`+
		`<th>at worst</th><th>recovered after</th></tr>`, head, 100*RecoveryMargin, fmtMS(recoveryFloorMS), sfx)
	for _, w := range waves {
		rec := "not within the " + fmtDur(w.ObservedAfter) + " observed"
		if w.Recovered {
			rec = fmtDur(w.Recovery)
		}
		fmt.Fprintf(b, "<tr><td>%.0fs–%.0fs</td><td>%s → %s %s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
			w.Start.Sub(r.Timeline.Origin).Seconds(), w.End.Sub(r.Timeline.Origin).Seconds(), runrecord.FormatConc(runrecord.RoundLevel(w.Base)), runrecord.FormatConc(runrecord.RoundLevel(w.Peak)), runrecord.LevelUnit(w.ByRate),
			fmtMS(w.BeforeTTFTP50), fmtMS(w.PeakTTFTP50), html.EscapeString(rec))
	}
	b.WriteString("</table>\n")
}

// slug makes a client name safe for an element id.
func slug(name string) string {
	if name == "" {
		return "unnamed"
	}
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func writeRoutesHTML(b *bytes.Buffer, r *Run) {
	recs := routeRecords(r)
	_, groups := r.Routes()
	if len(recs) == 0 {
		return
	}
	b.WriteString(`<h2>Per client, route and model</h2><table id="routes"><tr><th>client · route · model</th><th>requests</th>` +
		`<th>failed</th><th>TTFT p50</th><th>TTFT p95</th><th>E2E p50</th><th>tok/s p50</th></tr>`)
	for _, rr := range recs {
		g := groups[rr.RouteKey]
		fmt.Fprintf(b, "<tr><td>%s</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
			html.EscapeString(rr.Label()), rr.Requests, fmtPct(ratio(float64(rr.Failures), float64(rr.Requests))),
			htmlQuantile(record.DistTTFT, g.S(record.DistTTFT), 0.5), htmlQuantile(record.DistTTFT, g.S(record.DistTTFT), 0.95),
			htmlQuantile(record.DistE2E, g.S(record.DistE2E), 0.5), htmlQuantile(record.DistTokensPerSec, g.S(record.DistTokensPerSec), 0.5))
	}
	b.WriteString("</table>\n")
}

func writePairedHTML(b *bytes.Buffer, r *Run) {
	for i, pc := range r.Paired() {
		a, bn := html.EscapeString(runrecord.ClientLabel(pc.A)), html.EscapeString(runrecord.ClientLabel(pc.B))
		fmt.Fprintf(b, `<h2>Paired: %s vs %s on the same dataset items</h2><p class="sub">%d pairs; difference = %s − %s, `+
			`median of the per-item differences with its 95%% interval.</p><table id="paired-%d"><tr><th>metric</th><th>pairs</th>`+
			`<th>%s p50</th><th>%s p50</th><th>median Δ</th><th>95%% CI</th><th>verdict</th></tr>`, a, bn, pc.Pairs, bn, a, i, a, bn)
		for _, row := range pc.Rows {
			f, sf := fmtMS, fmtSigned
			if row.Metric == "tokens_per_sec" {
				f = func(v float64) string { return fmt.Sprintf("%.1f/s", v) }
				sf = func(v float64) string { return fmt.Sprintf("%+.1f/s", v) }
			}
			if row.Pairs < pairMin {
				fmt.Fprintf(b, "<tr><td>%s</td><td>%d</td><td colspan=\"5\">too few pairs</td></tr>\n", row.Metric, row.Pairs)
				continue
			}
			class := "same"
			if strings.HasSuffix(row.Verdict, "better") {
				class = "better"
			} else if strings.HasSuffix(row.Verdict, "worse") {
				class = "worse"
			}
			fmt.Fprintf(b, "<tr><td>%s</td><td>%d</td><td>%s</td><td>%s</td><td>%s (%+.1f%%)</td><td>[%s, %s]</td><td class=\"%s\">%s</td></tr>\n",
				row.Metric, row.Pairs, f(row.MedianA), f(row.MedianB), sf(row.MedianDiff), 100*row.RelDiff, sf(row.CILow), sf(row.CIHigh),
				class, html.EscapeString(row.Verdict))
		}
		b.WriteString("</table>\n")
	}
}

// clientCharts sets the clients side by side: TTFT and E2E distributions.
func clientCharts(r *Run) string {
	var out strings.Builder
	for _, m := range []struct {
		id, title, x string
		metric       record.Dist
	}{
		{"ttft-clients", "TTFT distribution per client", "time to first token (log scale)", record.DistTTFT},
		{"e2e-clients", "End-to-end time per client", "end-to-end time (log scale)", record.DistE2E},
	} {
		var sk []*sketch.Sketch
		for _, name := range r.Clients() {
			sk = append(sk, r.Client(name).Category(runrecord.AllCategories).S(m.metric))
		}
		lo, hi := histRange(sk...)
		c := chart{ID: m.id, Title: m.title, XLabel: m.x, YLabel: "share of calls", LogX: true, FmtX: msTick, FmtY: share}
		for i, name := range r.Clients() {
			c.Series = append(c.Series, histogramSeries(runrecord.ClientLabel(name), sk[i], lo, hi, 40))
		}
		out.WriteString(c.svg())
	}
	return out.String()
}
