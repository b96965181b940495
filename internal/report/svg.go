package report

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// A tiny line-chart drawer: enough for histograms (on a log axis) and time
// series, written as inline SVG so the report needs no script and no network.

type point struct{ X, Y float64 }

type series struct {
	Name   string
	Points []point
	Dashed bool
}

type chart struct {
	ID, Title, XLabel, YLabel string
	LogX                      bool
	Series                    []series
	FmtX, FmtY                func(float64) string
}

var palette = []string{"#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#ca8a04", "#db2777"} //nolint:gochecknoglobals // colours

const (
	chartW, chartH                   = 560.0, 260.0
	padL, padR, padT, padB           = 62.0, 16.0, 28.0, 44.0
	plotW, plotH                     = chartW - padL - padR, chartH - padT - padB
	emptyChartMessage                = "no data"
	legendRowHeight, legendCharWidth = 14.0, 6.5
)

func (c chart) svg() string {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" id="%s" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s">`,
		html.EscapeString(c.ID), chartW, chartH, html.EscapeString(c.Title))
	fmt.Fprintf(&b, `<text class="title" x="%.0f" y="16">%s</text>`, padL, html.EscapeString(c.Title))
	minX, maxX, maxY := math.Inf(1), math.Inf(-1), 0.0
	for _, s := range c.Series {
		for _, p := range s.Points {
			if !finite(p.X) || !finite(p.Y) || (c.LogX && p.X <= 0) {
				continue
			}
			minX, maxX, maxY = math.Min(minX, p.X), math.Max(maxX, p.X), math.Max(maxY, p.Y)
		}
	}
	if math.IsInf(minX, 0) {
		fmt.Fprintf(&b, `<text class="empty" x="%.0f" y="%.0f">%s</text></svg>`, chartW/2, chartH/2, emptyChartMessage)
		return b.String()
	}
	if maxX == minX {
		maxX = minX + 1
		if c.LogX {
			maxX = minX * 2
		}
	}
	if maxY == 0 {
		maxY = 1
	}
	maxY *= 1.08
	tx := func(x float64) float64 {
		if c.LogX {
			return padL + plotW*(math.Log(x)-math.Log(minX))/(math.Log(maxX)-math.Log(minX))
		}
		return padL + plotW*(x-minX)/(maxX-minX)
	}
	ty := func(y float64) float64 { return padT + plotH*(1-y/maxY) }
	// Axes and ticks.
	fmt.Fprintf(&b, `<rect class="plot" x="%.0f" y="%.0f" width="%.0f" height="%.0f"/>`, padL, padT, plotW, plotH)
	for i := 0; i <= 4; i++ {
		y := maxY * float64(i) / 4
		fmt.Fprintf(&b, `<line class="grid" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/><text class="tick" x="%.1f" y="%.1f" text-anchor="end">%s</text>`,
			padL, padL+plotW, ty(y), ty(y), padL-4, ty(y)+3, html.EscapeString(c.FmtY(y)))
	}
	for i := 0; i <= 4; i++ {
		var x float64
		if c.LogX {
			x = math.Exp(math.Log(minX) + (math.Log(maxX)-math.Log(minX))*float64(i)/4)
		} else {
			x = minX + (maxX-minX)*float64(i)/4
		}
		fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, tx(x), padT+plotH+14, html.EscapeString(c.FmtX(x)))
	}
	fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, padL+plotW/2, chartH-6, html.EscapeString(c.XLabel))
	fmt.Fprintf(&b, `<text class="axis" transform="translate(12,%.1f) rotate(-90)" text-anchor="middle">%s</text>`, padT+plotH/2, html.EscapeString(c.YLabel))
	// Series.
	lx := padL + plotW
	for i, s := range c.Series {
		col := palette[i%len(palette)]
		var pts []string
		for _, p := range s.Points {
			if !finite(p.X) || !finite(p.Y) || (c.LogX && p.X <= 0) {
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", tx(p.X), ty(p.Y)))
		}
		dash := ""
		if s.Dashed {
			dash = ` stroke-dasharray="5 3"`
		}
		if len(pts) == 1 {
			fmt.Fprintf(&b, `<circle class="series" cx="%s" r="3" fill="%s"/>`, strings.Replace(pts[0], ",", `" cy="`, 1), col)
		} else if len(pts) > 1 {
			fmt.Fprintf(&b, `<polyline class="series" data-series="%s" fill="none" stroke="%s" stroke-width="1.6"%s points="%s"/>`,
				html.EscapeString(s.Name), col, dash, strings.Join(pts, " "))
		}
		// Legend, right-aligned in the top margin.
		w := legendCharWidth*float64(len([]rune(s.Name))) + 16
		lx -= w
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="10" height="3" fill="%s"/><text class="legend" x="%.1f" y="%.1f">%s</text>`,
			lx, padT-legendRowHeight+4, col, lx+13, padT-legendRowHeight+8, html.EscapeString(s.Name))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// histogramSeries turns a sketch into a share-per-bin curve on a log axis:
// sketch buckets are regrouped into `bins` equal log-width bins between lo and
// hi so that several categories line up on one chart.
func histogramSeries(name string, s *Sketch, lo, hi float64, bins int) series {
	out := series{Name: name}
	if s.Count() == 0 || !(hi > lo) || lo <= 0 {
		return out
	}
	counts := make([]float64, bins)
	step := (math.Log(hi) - math.Log(lo)) / float64(bins)
	// Spread each sketch bucket over the bins it overlaps (in log space), so
	// bins catching two sketch buckets do not spike next to bins catching one.
	s.Bins(func(bl, bh float64, c uint64) {
		if bh <= 0 {
			counts[0] += float64(c)
			return
		}
		a := (math.Log(math.Max(bl, lo*0.999)) - math.Log(lo)) / step
		z := (math.Log(math.Max(bh, lo)) - math.Log(lo)) / step
		if z <= a {
			counts[max(0, min(bins-1, int(a)))] += float64(c)
			return
		}
		for i := max(0, int(a)); i < bins && float64(i) < z; i++ {
			ov := math.Min(z, float64(i+1)) - math.Max(a, float64(i))
			if ov > 0 {
				counts[i] += float64(c) * ov / (z - a)
			}
		}
	})
	for i, c := range counts {
		out.Points = append(out.Points, point{X: math.Exp(math.Log(lo) + (float64(i)+0.5)*step), Y: c / float64(s.Count())})
	}
	return out
}

// histRange is the common log range of several sketches (0.5th–99.9th percentile, padded).
func histRange(sk ...*Sketch) (lo, hi float64) {
	lo, hi = math.Inf(1), 0
	for _, s := range sk {
		if s.Count() == 0 {
			continue
		}
		lo = math.Min(lo, math.Max(s.Quantile(0.005), 1e-3))
		hi = math.Max(hi, s.Quantile(0.999))
	}
	if math.IsInf(lo, 0) || hi <= lo {
		return 0, 0
	}
	return lo / 1.2, hi * 1.2
}
