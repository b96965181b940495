package report

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"strings"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// The slowest calls' trace ids, per category: what a team with
// OpenTelemetry on its gateway or engine opens to see where the worst
// calls' time went on the server. Only the categories' own rows are listed
// (a run's "all" row names calls its categories already name).

// slowestRows are the summary rows of categories with traced answers.
func slowestRows(rows []summaryRow) []summaryRow {
	var out []summaryRow
	for _, row := range rows {
		if row.label == runrecord.AllCategories || strings.HasSuffix(row.label, " · "+runrecord.AllCategories) {
			continue
		}
		if len(row.g.Slowest) > 0 {
			out = append(out, row)
		}
	}
	return out
}

// slowTTFT is a slow call's TTFT as the tables print it ("-" when unknown).
func slowTTFT(c runrecord.SlowCall) string {
	if c.TTFTMS == nil {
		return fmtMS(math.NaN())
	}
	return fmtMS(*c.TTFTMS)
}

func writeSlowestText(b *strings.Builder, rows []summaryRow, heading string, w int) {
	rows = slowestRows(rows)
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "\n  slowest calls by E2E (trace ids)\n  %-*s %9s %9s  %s\n", w, heading, "e2e", "ttft", "trace id")
	for _, row := range rows {
		for _, c := range row.g.Slowest {
			fmt.Fprintf(b, "  %-*s %9s %9s  %s\n", w, row.label, fmtMS(c.E2EMS), slowTTFT(c), c.TraceID)
		}
	}
}

func writeSlowestHTML(b *bytes.Buffer, rows []summaryRow, heading string) {
	rows = slowestRows(rows)
	if len(rows) == 0 {
		return
	}
	esc := html.EscapeString
	fmt.Fprintf(b, `<h2>Slowest calls</h2><p class="sub">The slowest answers of each category by E2E, with the W3C trace id their requests carried: open it in the server's tracing backend.</p>`+
		`<table id="slowest"><tr><th>%s</th><th>E2E</th><th>TTFT</th><th>trace id</th></tr>`, esc(heading))
	for _, row := range rows {
		for _, c := range row.g.Slowest {
			fmt.Fprintf(b, "<tr><td>%s</td><td>%s</td><td>%s</td><td><code>%s</code></td></tr>\n",
				esc(row.label), esc(fmtMS(c.E2EMS)), esc(slowTTFT(c)), esc(c.TraceID))
		}
	}
	b.WriteString("</table>\n")
}
