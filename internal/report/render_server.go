package report

import (
	"bytes"
	"fmt"
	"html"
	"strings"

	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/servermetrics"
)

// The server's own view beside the client's: what the inference server's
// /metrics counted over the run and per stage (internal/servermetrics), the
// TTFT split it makes exact, and the findings that cite it.

func histMeanMS(w *servermetrics.Window, q string) string {
	if h, ok := w.Histograms[q]; ok && h.Mean != nil {
		return fmtMS(*h.Mean * 1e3)
	}
	return "–"
}

func gaugeCell(w *servermetrics.Window, q string, p95 bool) string {
	g, ok := w.Gauges[q]
	if !ok {
		return "–"
	}
	v := g.Mean
	if p95 {
		v = g.P95
	}
	if q == servermetrics.KVCacheUsage {
		return fmtPct(v)
	}
	return fmt.Sprintf("%.1f", v)
}

func counterCell(w *servermetrics.Window, q string) string {
	if v, ok := w.Counters[q]; ok {
		return fmt.Sprintf("%.0f", v)
	}
	return "–"
}

// serverRow is one line of the server table: the run or a stage, with the
// client's TTFT mean of the same calls beside it.
type serverRow struct {
	label string
	w     *servermetrics.Window
	g     *Group
}

// r is nil for a merged record: it keeps no client figures per window, and
// the client's column stays empty.
func serverRows(r *Run, v servermetrics.View) []serverRow {
	var all *Group
	var stages []*Stage
	if r != nil {
		run := serverRun(r, v)
		all, stages = run.Category(runrecord.AllCategories), run.Stages()
	}
	rows := []serverRow{{label: "run", w: v.Run, g: all}}
	if v.Measured != nil {
		// The run's server figures count the warm-up's calls, the client's
		// leave them out: the client's TTFT goes beside the window after it.
		rows = []serverRow{{label: "run", w: v.Run}, {label: "after warm-up", w: v.Measured, g: all}}
	}
	for i := range v.Stages {
		w := &v.Stages[i]
		var g *Group
		for _, st := range stages {
			if ServerStageName(st) == w.Name {
				g = st.All
			}
		}
		rows = append(rows, serverRow{label: w.Name, w: w, g: g})
	}
	return rows
}

var serverColumns = []string{"finished", "prompt tok", "waiting p95", "running p95", "KV p95", "preempt", //nolint:gochecknoglobals // read-only
	"queue", "prefill", "server TTFT", "client TTFT"}

func (row serverRow) cells() []string {
	w := row.w
	client := "–"
	if row.g != nil && row.g.S(record.DistTTFT).Count() > 0 {
		client = fmtMS(row.g.S(record.DistTTFT).Mean())
	}
	return []string{
		counterCell(w, servermetrics.RequestsFinished), counterCell(w, servermetrics.PromptTokens),
		gaugeCell(w, servermetrics.RequestsWaiting, true), gaugeCell(w, servermetrics.RequestsRunning, true),
		gaugeCell(w, servermetrics.KVCacheUsage, true), counterCell(w, servermetrics.Preemptions),
		histMeanMS(w, servermetrics.Queue), histMeanMS(w, servermetrics.Prefill), histMeanMS(w, servermetrics.TTFT), client,
	}
}

// viewHeading names the endpoint, the engine and how it was read.
func viewHeading(v servermetrics.View) string {
	s := fmt.Sprintf("%s (%s, %d scrapes every %gs, scrape mean %.1f ms", v.Endpoint, orUnknown(v.Engine), v.Scrapes, v.IntervalS, v.ScrapeLatency.MeanMS)
	if v.Failed > 0 {
		s += fmt.Sprintf(", %d failed", v.Failed)
	}
	if v.Source != "" {
		s += ", source " + v.Source
	}
	if v.Client != "" {
		s += ", client " + v.Client
	}
	return s + ")"
}

func orUnknown(s string) string {
	if s == "" {
		return servermetrics.EngineUnknown
	}
	return s
}

// fmtEstimate writes a quantile estimate (seconds) in ms with the bucket
// bounds that limit it: a value is known no better than its bucket.
func fmtEstimate(e servermetrics.Estimate) string {
	switch {
	case e.Hi == nil:
		return fmt.Sprintf("> %s (last bucket)", fmtMS(e.Lo*1e3))
	case e.Lo == 0: // interpolating from 0 would invent a value the buckets do not hold
		return fmt.Sprintf("≤ %s (first bucket)", fmtMS(*e.Hi*1e3))
	}
	return fmt.Sprintf("≈ %s (bucket %s–%s)", fmtMS(e.Value*1e3), fmtMS(e.Lo*1e3), fmtMS(*e.Hi*1e3))
}

// serverText is the text section: per endpoint, the run's and the stages'
// server figures beside the client's TTFT, the split, and what is missing.
// r is nil for a merged record: the server's figures without the client's
// beside them (serverRows).
func serverText(r *Run, views []servermetrics.View, changes []runrecord.ServerChange) string {
	if len(views) == 0 {
		return ""
	}
	var b strings.Builder
	for _, v := range views {
		fmt.Fprintf(&b, "\n█ The server's own view — %s\n", viewHeading(v))
		if v.Missing != "" {
			fmt.Fprintf(&b, "  unknown: %s\n", v.Missing)
		}
		for _, w := range v.Warnings {
			fmt.Fprintf(&b, "  ! %s\n", w)
		}
		if v.Run == nil {
			continue
		}
		if len(v.Config) > 0 {
			fmt.Fprintf(&b, "  server configuration: %s\n", servermetrics.ConfigText(v.Config))
		}
		if len(v.Models) > 0 {
			fmt.Fprintf(&b, "  served models: %s\n", servermetrics.ModelsText(v.Models))
		}
		for _, l := range energyLines(v) {
			fmt.Fprintf(&b, "  %s\n", l)
		}
		if v.Engine == servermetrics.EngineDCGM {
			continue // a GPU exporter: no requests, queue or TTFT to show
		}
		fmt.Fprintf(&b, "\n  %-12s", "window")
		for _, c := range serverColumns {
			fmt.Fprintf(&b, " %11s", c)
		}
		b.WriteString("\n")
		for _, row := range serverRows(r, v) {
			fmt.Fprintf(&b, "  %-12s", row.label)
			for _, c := range row.cells() {
				fmt.Fprintf(&b, " %11s", c)
			}
			b.WriteString("\n")
		}
		legend := "  (means in ms; waiting and running are requests, sampled at each scrape; – the server does not tell"
		switch {
		case r == nil:
			legend += "; a merged record keeps no client figures per window: client TTFT and the TTFT split are each instance's report's"
		case v.Measured != nil:
			legend += "; the run counts the warm-up's calls, the client's TTFT leaves them out"
		}
		b.WriteString(legend + ")\n")
		if r != nil {
			writeClientBesideServerText(&b, r, v)
		}
		for _, q := range []string{servermetrics.TTFT, servermetrics.Queue, servermetrics.Prefill} {
			if h, ok := v.Run.Histograms[q]; ok && h.P99 != nil {
				fmt.Fprintf(&b, "  server %s p50 %s, p99 %s (estimates within the bucket that holds them)\n", q, fmtEstimate(*h.P50), fmtEstimate(*h.P99))
			}
		}
		if v.Run.PrefixHitRatio != nil {
			fmt.Fprintf(&b, "  server prefix-cache hit ratio (Δhits/Δqueries, prompt tokens): %s\n", fmtPct(*v.Run.PrefixHitRatio))
		}
		if sd := v.Run.SpecDecode; sd != nil {
			fmt.Fprintf(&b, "  server speculative decoding: %s\n", specDecodeText(sd))
		}
		if line := serverChangesLine(v, changes); line != "" {
			fmt.Fprintf(&b, "  against the baseline: %s\n", line)
		}
	}
	return b.String()
}

// writeClientBesideServerText writes what the client's calls say beside
// the server's figures: the count check and the TTFT split.
func writeClientBesideServerText(b *strings.Builder, r *Run, v servermetrics.View) {
	if c, ok := serverCount(r, v); ok {
		fmt.Fprintf(b, "  %s\n", c.line())
	}
	if sp, ok := splitTTFT(serverRun(r, v).Category(runrecord.AllCategories), clientWindow(v)); ok {
		fmt.Fprintf(b, "\n  TTFT split (%s): %s\n", clientWindowName(v), sp)
	} else {
		b.WriteString("\n  TTFT split: the server exposes no TTFT histogram; the client's own inference (diagnosis) stands\n")
	}
}

// writeServerHTML is the HTML section, the same figures as the text (r nil:
// a merged record's, without the client's).
func writeServerHTML(b *bytes.Buffer, r *Run, views []servermetrics.View) {
	if len(views) == 0 {
		return
	}
	esc := html.EscapeString
	b.WriteString(`<h2>The server's own view</h2><div id="server">`)
	for _, v := range views {
		fmt.Fprintf(b, "<p class=\"sub\">%s</p>\n", esc(viewHeading(v)))
		if v.Missing != "" {
			fmt.Fprintf(b, "<p>unknown: %s</p>\n", esc(v.Missing))
		}
		for _, w := range v.Warnings {
			fmt.Fprintf(b, "<p>! %s</p>\n", esc(w))
		}
		if v.Run == nil {
			continue
		}
		if len(v.Config) > 0 {
			fmt.Fprintf(b, "<p class=\"server-config\">server configuration: %s</p>\n", esc(servermetrics.ConfigText(v.Config)))
		}
		if len(v.Models) > 0 {
			fmt.Fprintf(b, "<p class=\"server-models\">served models: %s</p>\n", esc(servermetrics.ModelsText(v.Models)))
		}
		writeEnergyHTML(b, v)
		if v.Engine == servermetrics.EngineDCGM {
			continue
		}
		b.WriteString(`<div class="wide"><table class="server"><tr><th>window</th>`)
		for _, c := range serverColumns {
			fmt.Fprintf(b, "<th>%s</th>", esc(c))
		}
		b.WriteString("</tr>\n")
		for _, row := range serverRows(r, v) {
			fmt.Fprintf(b, "<tr><td>%s</td>", esc(row.label))
			for _, c := range row.cells() {
				fmt.Fprintf(b, "<td>%s</td>", esc(c))
			}
			b.WriteString("</tr>\n")
		}
		b.WriteString("</table></div>\n")
		if r == nil {
			b.WriteString("<p class=\"sub\">A merged record keeps no client figures per window: client TTFT and the TTFT split are each instance's report's.</p>\n")
		} else {
			writeClientBesideServerHTML(b, r, v)
		}
		if sd := v.Run.SpecDecode; sd != nil {
			fmt.Fprintf(b, "<p class=\"spec-decode\">server speculative decoding: %s</p>\n", esc(specDecodeText(sd)))
		}
	}
	b.WriteString("</div>\n")
}

// writeClientBesideServerHTML is writeClientBesideServerText's HTML.
func writeClientBesideServerHTML(b *bytes.Buffer, r *Run, v servermetrics.View) {
	if c, ok := serverCount(r, v); ok {
		fmt.Fprintf(b, "<p class=\"server-count\">%s</p>\n", html.EscapeString(c.line()))
	}
	if sp, ok := splitTTFT(serverRun(r, v).Category(runrecord.AllCategories), clientWindow(v)); ok {
		fmt.Fprintf(b, "<p>TTFT split (%s): %s</p>\n", clientWindowName(v), html.EscapeString(sp.String()))
	}
}

// specDecodeText is speculative decoding's acceptance in a line.
func specDecodeText(sd *servermetrics.SpecDecode) string {
	out := fmt.Sprintf("%.0f drafts, %.0f draft tokens, %.0f accepted", sd.Drafts, sd.DraftTokens, sd.AcceptedTokens)
	if sd.AcceptanceRate != nil {
		out += "; acceptance rate " + fmtPct(*sd.AcceptanceRate)
	}
	if sd.MeanAcceptanceLength != nil {
		out += fmt.Sprintf(", mean acceptance length %.2f tokens a step", *sd.MeanAcceptanceLength)
	}
	if len(sd.ByPosition) > 0 {
		parts := make([]string, len(sd.ByPosition))
		for i, p := range sd.ByPosition {
			parts[i] = fmt.Sprintf("%d: %s", i, fmtPct(p))
		}
		out += "; accepted by position " + strings.Join(parts, ", ")
	}
	return out
}
