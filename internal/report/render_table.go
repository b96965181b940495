package report

import (
	"bytes"
	"fmt"
	"html"
	"strconv"
	"strings"
)

func writeTableHTML(b *bytes.Buffer, id string, head []string, rows [][]string) {
	fmt.Fprintf(b, `<table id="%s"><tr>`, id)
	for _, h := range head {
		fmt.Fprintf(b, "<th>%s</th>", html.EscapeString(h))
	}
	b.WriteString("</tr>\n")
	for _, row := range rows {
		b.WriteString("<tr>")
		for _, c := range row {
			fmt.Fprintf(b, "<td>%s</td>", htmlCell(c))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n")
	if anyStarredRows(rows) { // a percentile too few calls bound: say what the star means
		fmt.Fprintf(b, `<p class="sub">%s</p>`+"\n", html.EscapeString(tooFewLegend()))
	}
}

// htmlCell is a text table's cell in HTML: a percentile's interval goes
// small under its figure ("412ms [398–431]"), so a table of many
// percentiles (the embed and rerank section has six) stays as narrow as
// its figures; a figure too few calls bound is marked.
func htmlCell(c string) string {
	if figure, ends, ok := strings.Cut(c, " ["); ok && strings.HasSuffix(ends, "]") && !strings.Contains(figure, " ") {
		return html.EscapeString(figure) + `<br><span class="ci">[` + html.EscapeString(ends) + "</span>"
	}
	if strings.HasSuffix(c, tooFewMark) && !strings.Contains(c, " ") {
		return `<span class="few" title="too few calls to bound this percentile">` + html.EscapeString(c) + "</span>"
	}
	return html.EscapeString(c)
}

// writeCells writes one row of a text table: each cell in its width
// (negative: left-aligned), two spaces in.
func writeCells(b *strings.Builder, widths []int, cells []string) {
	b.WriteString(" ")
	for i, c := range cells {
		fmt.Fprintf(b, " %*s", widths[i], c)
	}
	b.WriteString("\n")
}

// writeAlignedText writes a table of text cells in columns as wide as
// their widest cell; the last column is left ragged.
func writeAlignedText(b *strings.Builder, head []string, rows [][]string) {
	width := make([]int, len(head))
	for _, row := range append([][]string{head}, rows...) {
		for i, c := range row {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	for _, row := range append([][]string{head}, rows...) {
		b.WriteString("  ")
		for i, c := range row {
			if i == len(row)-1 {
				b.WriteString(c)
				break
			}
			fmt.Fprintf(b, "%-*s  ", width[i], c)
		}
		b.WriteString("\n")
	}
}

// Tick labels: the ticks sit on round values, so they print without the
// fixed decimals of a figure in a table ("20ms", not "20.0ms").
func msTick(x float64) string {
	switch {
	case x == 0:
		return "0"
	case x >= 1000:
		return strconv.FormatFloat(x/1000, 'g', 4, 64) + "s"
	default:
		return strconv.FormatFloat(x, 'g', 4, 64) + "ms"
	}
}

func numTick(y float64) string { return strconv.FormatFloat(y, 'g', 6, 64) }

func secTick(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) + "s" }
