package report

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"

	"github.com/llmstream/xk6-llmstream/internal/quantile"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
)

// A percentile is printed with its 95 % interval, "412ms [398–431]", the
// ends in the figure's unit. One the calls cannot bound keeps only what
// they do say, marked with a star the table's legend explains: "≥602ms*"
// (its lower end; a p99 of 32 calls), "~120ms*" (no end at all: a median
// of five). The figure itself stays in the record; printed bare it would
// read as exact.

// perCall says whether d has one value per call (per job, per connection):
// independent draws, which a percentile's distribution-free interval
// needs. The gaps pool many values per call, which are not.
func perCall(d record.Dist) bool { return !d.Row().Keep.PerEvent }

// fmtQuantile is the p-quantile of s with its interval.
func fmtQuantile(m record.Dist, s *sketch.Sketch, p float64) string {
	if s == nil || s.Count() == 0 {
		return "-"
	}
	return fmtWithBounds(m, s.Quantile(p), s.Interval(p, quantile.Confidence))
}

// fmtQuantileMS is fmtQuantile of a duration.
func fmtQuantileMS(s *sketch.Sketch, p float64) string {
	return fmtQuantile(record.DistTTFT, s, p)
}

// fmtWithBounds writes v (a figure of metric m) with its interval b.
func fmtWithBounds(m record.Dist, v float64, b quantile.Bounds) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case !b.TooFew():
		return fmtMetric(m, v) + " [" + fmtEnd(m, v, b.Lo) + "–" + fmtEnd(m, v, b.Hi) + "]"
	case !math.IsNaN(b.Lo):
		return "≥" + fmtMetric(m, b.Lo) + tooFewMark
	case !math.IsNaN(b.Hi):
		return "≤" + fmtMetric(m, b.Hi) + tooFewMark
	default:
		return "~" + fmtMetric(m, v) + tooFewMark
	}
}

// tooFewMark flags a percentile the calls cannot bound.
const tooFewMark = "*"

// fmtEnd writes an end of v's interval in v's unit and precision, without
// the unit: v's cell names it once.
func fmtEnd(m record.Dist, v, end float64) string {
	switch {
	case m == record.DistTokensPerSec:
		return strconv.FormatFloat(end, 'f', 1, 64)
	case m == record.DistNetworkShare:
		return strconv.FormatFloat(100*end, 'f', 1, 64)
	case v >= 10000:
		return strconv.FormatFloat(end/1000, 'f', 1, 64)
	case v >= 1000:
		return strconv.FormatFloat(end/1000, 'f', 2, 64)
	case v >= 100:
		return strconv.FormatFloat(end, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(end, 'f', 1, 64)
	default:
		return strconv.FormatFloat(end, 'f', 2, 64)
	}
}

// fmtRecordedMS writes a duration percentile the record holds with its
// interval ("—" when not measured). A record written before intervals were
// kept has none: its figure is printed alone.
func fmtRecordedMS(v *float64, ci *runrecord.CI) string {
	if v == nil {
		return "—"
	}
	if ci == nil {
		return fmtMS(*v)
	}
	b := quantile.Bounds{Lo: math.NaN(), Hi: math.NaN()}
	if ci[0] != nil {
		b.Lo = *ci[0]
	}
	if ci[1] != nil {
		b.Hi = *ci[1]
	}
	return fmtWithBounds(record.DistTTFT, *v, b)
}

// htmlQuantile is fmtQuantile as an HTML table cell's content: the
// interval smaller beside the figure, and a figure too few calls bound
// marked, its tooltip saying how many calls it rests on and needs.
func htmlQuantile(m record.Dist, s *sketch.Sketch, p float64) string {
	if s == nil || s.Count() == 0 {
		return "-"
	}
	v, b := s.Quantile(p), s.Interval(p, quantile.Confidence)
	cell := fmtWithBounds(m, v, b)
	if !b.TooFew() {
		figure, ends, _ := strings.Cut(cell, " ")
		return html.EscapeString(figure) + ` <span class="ci">` + html.EscapeString(ends) + "</span>"
	}
	return fmt.Sprintf(`<span class="few" title="too few calls to bound the p%s: %d of the %d it needs">%s</span>`,
		strconv.FormatFloat(100*p, 'g', 4, 64), b.Calls, b.Needed, html.EscapeString(cell))
}

// anyStarred says whether a cell is a percentile too few calls bound.
func anyStarred(cells []string) bool {
	for _, c := range cells {
		if strings.HasSuffix(c, tooFewMark) {
			return true
		}
	}
	return false
}

// anyStarredRows is anyStarred of a table.
func anyStarredRows(rows [][]string) bool {
	for _, row := range rows {
		if anyStarred(row) {
			return true
		}
	}
	return false
}

// writeTooFewLegend writes a section's legend of the star, when a cell has one.
func writeTooFewLegend(b *strings.Builder, starred bool) {
	if starred {
		fmt.Fprintf(b, "  %s\n", tooFewLegend())
	}
}

// intervalLegend explains a table's intervals (pooled: it has a row of
// gaps, which have none) and its stars when it has any, a line each.
func intervalLegend(starred, pooled bool) []string {
	s := "[lo–hi]: the percentile's 95 % interval (order statistics of the calls, sketch error included)"
	if pooled {
		s = "[lo–hi]: the percentile's 95 % interval (order statistics of the calls, sketch error included; " +
			"none for gaps, many to a call)"
	}
	lines := []string{s}
	if starred {
		lines = append(lines, tooFewLegend())
	}
	return lines
}

// tooFewLegend explains the star.
func tooFewLegend() string {
	return fmt.Sprintf("%s too few calls to bound the percentile (a p95 needs %d, a p99 %d): ≥ gives its lower end",
		tooFewMark, quantile.MinCalls(0.95, quantile.Confidence), quantile.MinCalls(0.99, quantile.Confidence))
}
