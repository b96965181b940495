package report

import (
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// summaryRow is one row of the summary tables.
type summaryRow struct {
	label string
	g     *Group
}

// summaryRows are the rows of the summary tables: each category and "all";
// with several clients, each client's categories and total, then the run's.
func summaryRows(r *Run) []summaryRow {
	var rows []summaryRow
	if !r.PerClient() {
		for _, cat := range append(r.Categories(), runrecord.AllCategories) {
			rows = append(rows, summaryRow{cat, r.Category(cat)})
		}
		return rows
	}
	for _, name := range r.Clients() {
		v := r.Client(name)
		for _, cat := range append(v.Categories(), runrecord.AllCategories) {
			rows = append(rows, summaryRow{runrecord.ClientLabel(name) + " · " + cat, v.Category(cat)})
		}
	}
	return append(rows, summaryRow{"every client · all", r.Category(runrecord.AllCategories)})
}

func rowHeading(r *Run) string {
	if r.PerClient() {
		return "client · category"
	}
	return "category"
}

// forEachView calls fn with the run, or with each client's view when it had several.
func forEachView(r *Run, fn func(label string, v *Run)) {
	if !r.PerClient() {
		fn("", r)
		return
	}
	for _, name := range r.Clients() {
		fn("client "+runrecord.ClientLabel(name), r.Client(name))
	}
}

func suffix(label string) string {
	if label == "" {
		return ""
	}
	return " — " + label
}
