package report

import (
	"bytes"
	"fmt"
	"html"
	"strings"

	"github.com/llmstream/xk6-llmstream/internal/report/compare"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/servermetrics"
)

// The server's figures against the baseline's: a change the server's own
// /metrics show (its queue, prefill, decode, KV cache, throughput) is a change
// on the server's side, whatever the client's figures did, so a worse one is
// a finding of its own (server_regressed).

// serverChangesLine is the text report's line of a view's changes: every
// figure compared, the changed ones marked.
func serverChangesLine(v servermetrics.View, changes []runrecord.ServerChange) string {
	var parts []string
	for _, c := range changes {
		if c.Endpoint != v.Endpoint || c.Client != v.Client {
			continue
		}
		s := serverChangeText(c)
		if c.Verdict != runrecord.VerdictSame {
			s += " (" + c.Verdict + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// changedServer is the changes that are not "no significant change".
func changedServer(changes []runrecord.ServerChange) []runrecord.ServerChange {
	var out []runrecord.ServerChange
	for _, c := range changes {
		if c.Verdict != runrecord.VerdictSame {
			out = append(out, c)
		}
	}
	return out
}

// writeServerChangesText lists the server figures that changed against the
// baseline, under the comparison's heading.
func writeServerChangesText(b *strings.Builder, changes []runrecord.ServerChange) {
	if len(changes) == 0 {
		return
	}
	changed := changedServer(changes)
	fmt.Fprintf(b, "\n  baseline, the server's own figures: %d of %d changed (≥%.0f%% and a floor; the server gives means, so no interval)\n",
		len(changed), len(changes), 100*compare.ServerMinEffect)
	for _, c := range changed {
		fmt.Fprintf(b, "    %-7s %s: %s\n", c.Verdict, c.Label(), serverChangeText(c))
	}
}

func writeServerChangesHTML(b *bytes.Buffer, changes []runrecord.ServerChange) {
	rows := make([]verdictRow, len(changes))
	for i, c := range changes {
		rows[i] = verdictRow{c.Label(), c.Figure, serverChangeText(c), c.Verdict}
	}
	writeVerdictTableHTML(b, "server-comparison", "server", rows)
}

// verdictRow is one compared figure of a baseline table: whose, which, how
// it changed, and the verdict.
type verdictRow struct{ label, figure, change, verdict string }

// writeVerdictTableHTML writes compared figures as a table, each verdict
// coloured; nothing without rows.
func writeVerdictTableHTML(b *bytes.Buffer, id, what string, rows []verdictRow) {
	if len(rows) == 0 {
		return
	}
	esc := html.EscapeString
	fmt.Fprintf(b, `<table id="%s"><tr><th>%s</th><th>figure</th><th>baseline → this run</th><th>verdict</th></tr>`, id, what)
	for _, r := range rows {
		fmt.Fprintf(b, "<tr><td>%s</td><td>%s</td><td>%s</td><td class=\"%s\">%s</td></tr>\n", esc(r.label), esc(r.figure), esc(r.change),
			verdictClass(r.verdict), r.verdict)
	}
	b.WriteString("</table>\n")
}

// verdictClass is the page's style class of a comparison verdict.
func verdictClass(verdict string) string {
	switch verdict {
	case runrecord.VerdictWorse:
		return "worse"
	case runrecord.VerdictBetter:
		return "better"
	}
	return "same"
}
