package report

import (
	"bytes"
	"fmt"
	"html"
	"strings"
	"unicode/utf8"
)

// Cost adds up what the calls of a group cost, for clients with prices. Failed
// calls count too: a provider bills the tokens it produced before failing.
type Cost struct {
	Calls    uint64  // priced calls
	Total    float64 // their cost
	Saved    float64 // what cached prompt tokens did not cost
	Currency string  // the first priced call's; "mixed" when clients differ
}

func (c *Cost) add(o *Observation) {
	if !o.Priced {
		return
	}
	c.merge(Cost{Calls: 1, Total: o.Cost.Total(), Saved: o.Cost.Saved, Currency: o.Currency})
}

func (c *Cost) merge(o Cost) {
	if o.Calls == 0 {
		return
	}
	switch {
	case c.Calls == 0:
		c.Currency = o.Currency
	case c.Currency != o.Currency:
		c.Currency = "mixed"
	}
	c.Calls += o.Calls
	c.Total += o.Total
	c.Saved += o.Saved
}

// Per1000 is the cost of a thousand calls at this group's mean.
func (c Cost) Per1000() float64 {
	if c.Calls == 0 {
		return 0
	}
	return 1000 * c.Total / float64(c.Calls)
}

// CostRecord is a group's cost in the run record.
type CostRecord struct {
	Currency     string  `json:"currency"`
	Calls        uint64  `json:"calls"`
	Total        float64 `json:"total"`
	Per1000Calls float64 `json:"per_1000_calls"`
	SavedByCache float64 `json:"saved_by_cache"`
}

func (g *Group) costRecord() *CostRecord {
	c := g.Cost
	if c.Calls == 0 {
		return nil
	}
	return &CostRecord{Currency: c.Currency, Calls: c.Calls, Total: c.Total, Per1000Calls: c.Per1000(), SavedByCache: c.Saved}
}

// merge adds another record's cost (merging the records of k6 instances).
func (cr *CostRecord) merge(o *CostRecord) *CostRecord {
	if o == nil {
		return cr
	}
	c := Cost{}
	if cr != nil {
		c = Cost{Calls: cr.Calls, Total: cr.Total, Saved: cr.SavedByCache, Currency: cr.Currency}
	}
	c.merge(Cost{Calls: o.Calls, Total: o.Total, Saved: o.SavedByCache, Currency: o.Currency})
	return &CostRecord{Currency: c.Currency, Calls: c.Calls, Total: c.Total, Per1000Calls: c.Per1000(), SavedByCache: c.Saved}
}

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
