package report

import (
	"fmt"
	"strings"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// retrievalColumns are the section's columns, in the text and the HTML.
var retrievalColumns = []string{ //nolint:gochecknoglobals // read-only table
	"op", "category", "load", "calls", "failed", "cancelled", "dur p50", "dur p95", "TTFB p95", "parse p50", "batch", "in tok/s",
	"late p99", "dur from due p95"}

// cells are the group's row of the section: "-" for what was not measured.
// A single run's groups and a merged record's share it.
func retrievalCells(rr *runrecord.RetrievalRecord) []string {
	load := fmt.Sprintf("%.0f VUs", rr.Load)
	if rr.ByRate {
		load = fmt.Sprintf("%.3g/s", rr.Load)
	}
	batch, tps := "-", "-"
	if rr.BatchMean != nil {
		batch = fmt.Sprintf("%.1f", *rr.BatchMean)
	}
	if rr.InputTokensPerSec != nil {
		tps = fmt.Sprintf("%.0f", *rr.InputTokensPerSec)
	}
	q := func(name string, p float64) string {
		if mr := rr.Metrics[name]; mr != nil && mr.Sketch != nil {
			return fmtQuantileMS(mr.Sketch, p)
		}
		return "-"
	}
	return []string{rr.Op, rr.Category, load, fmt.Sprint(rr.Calls), fmt.Sprint(rr.Failed),
		fmt.Sprint(rr.Errors[string(stream.ErrCanceled)]), q("duration", 0.5), q("duration", 0.95), q("ttfb", 0.95), q("parse", 0.5), batch, tps,
		q("dispatch_delay", 0.99), q("e2e_from_due", 0.95)}
}

// RetrievalText is the section's text: "" without such calls. A failed
// call counts in calls, failed, TTFB and parse (what it measured); the
// durations are the answered ones'. A call the test's stop cut in flight
// counts in calls, failed and cancelled only.
// The due-time columns are "-" for calls no schedule asked for, and left
// out of the text when no group has them.
func RetrievalText(groups []*RetrievalGroup) string {
	return retrievalRecordText(retrievalRecords(groups))
}

// retrievalRecordText is RetrievalText of the groups' records.
func retrievalRecordText(groups []runrecord.RetrievalRecord) string {
	if len(groups) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Embeddings and rerank (non-streamed: no TTFT or gaps)\n")
	widths := []int{-7, -16, 7, 6, 6, 9, 18, 18, 18, 18, 8, 9, 18, 18}
	rows := make([][]string, len(groups))
	due := false // the due-time columns, which only calls a schedule asked for fill
	for i := range groups {
		rows[i] = retrievalCells(&groups[i])
		due = due || rows[i][len(rows[i])-1] != "-" || rows[i][len(rows[i])-2] != "-"
	}
	cols := len(retrievalColumns)
	if !due { // with percentiles and their intervals the table is wide: leave out two empty columns
		cols -= 2
	}
	writeCells(&b, widths[:cols], retrievalColumns[:cols])
	starred := false
	for i := range groups {
		cells := rows[i][:cols]
		starred = starred || anyStarred(cells)
		writeCells(&b, widths[:cols], cells)
		if errs := errorTypes(groups[i].Errors); errs != "" {
			fmt.Fprintf(&b, "          failures: %s\n", errs)
		}
	}
	writeTooFewLegend(&b, starred)
	return b.String()
}
