package report

import (
	"bytes"
	"fmt"
	"html"
	"strings"
	"unicode/utf8"
)

// costRows are the summary rows of priced calls (none when no client had prices).
func costRows(rows []summaryRow) []summaryRow {
	var out []summaryRow
	for _, row := range rows {
		if row.g.Cost.Calls > 0 {
			out = append(out, row)
		}
	}
	return out
}

// fmtMoney prints a cost with enough digits for a single call's fractions of a cent.
func fmtMoney(v float64, currency string) string {
	return fmt.Sprintf("%.4f %s", v, currency)
}

func writeCostText(b *strings.Builder, rows []summaryRow, heading string, w int) {
	rows = costRows(rows)
	if len(rows) == 0 {
		return
	}
	heading = "cost · " + heading
	w = max(w, utf8.RuneCountInString(heading)) // fmt pads by runes
	fmt.Fprintf(b, "\n  %-*s %9s %16s %16s %16s\n", w, heading, "calls", "total", "per 1000 calls", "saved by cache")
	for _, row := range rows {
		c := row.g.Cost
		fmt.Fprintf(b, "  %-*s %9d %16s %16s %16s\n", w, row.label, c.Calls, fmtMoney(c.Total, c.Currency),
			fmtMoney(c.Per1000(), c.Currency), fmtMoney(c.Saved, c.Currency))
	}
}

func writeCostHTML(b *bytes.Buffer, rows []summaryRow, heading string) {
	rows = costRows(rows)
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, `<h2>Cost</h2><table id="cost"><tr><th>%s</th><th>priced calls</th><th>total</th><th>per 1000 calls</th><th>saved by cache</th></tr>`, html.EscapeString(heading))
	for _, row := range rows {
		c := row.g.Cost
		fmt.Fprintf(b, "<tr><td>%s</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td></tr>\n", html.EscapeString(row.label), c.Calls,
			html.EscapeString(fmtMoney(c.Total, c.Currency)), html.EscapeString(fmtMoney(c.Per1000(), c.Currency)), html.EscapeString(fmtMoney(c.Saved, c.Currency)))
	}
	b.WriteString("</table>\n")
}
