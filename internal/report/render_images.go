package report

import (
	"fmt"
	"strings"
)

// imageColumns are the section's columns, in the text and the HTML.
var imageColumns = []string{"images", "size", "calls", "TTFT p50", "TTFT p95", "image KB"} //nolint:gochecknoglobals // read-only table

// cells are the group's row of the section.
func (g *ImageGroup) cells() []string {
	count, size, kb := "none", "-", "-"
	if g.Images > 0 {
		count, size = fmt.Sprint(g.Images), g.Size
		if g.Images == 5 {
			count = "5+"
		}
		kb = fmt.Sprintf("%.0f", float64(g.Bytes)/float64(g.Calls)/1024)
	}
	return []string{count, size, fmt.Sprint(g.Calls), fmtQuantileMS(g.TTFT, 0.5), fmtQuantileMS(g.TTFT, 0.95), kb}
}

// ImageText is the section's text: "" when no prompt had images.
func ImageText(groups []*ImageGroup) string {
	if len(groups) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("TTFT by images in the prompt (chat calls with a TTFT; image tokens cost prefill)\n")
	widths := []int{-7, -9, 7, 18, 18, 12}
	writeCells(&b, widths, imageColumns)
	starred := false
	for _, g := range groups {
		cells := g.cells()
		starred = starred || anyStarred(cells)
		writeCells(&b, widths, cells)
	}
	writeTooFewLegend(&b, starred)
	return b.String()
}
