package report

import (
	"fmt"
	"html"
	"math"
	"strings"

	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
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
	// WholeX, WholeY: the axis counts things (VUs, streams): ticks on whole numbers.
	WholeX, WholeY bool
	// Empty replaces the plot when there is nothing worth drawing (say why);
	// "no data" when it is unset and no series has a point.
	Empty string
}

var palette = []string{"#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#ca8a04", "#db2777"} //nolint:gochecknoglobals // colours

const (
	chartW, chartH                   = 560.0, 276.0
	padL, padR, padB                 = 62.0, 16.0, 44.0
	plotW                            = chartW - padL - padR
	titleY                           = 16.0
	emptyChartMessage                = "no data"
	legendRowHeight, legendCharWidth = 14.0, 6.5
	// markerMax: a curve of this many points or fewer (stages, short runs)
	// marks each point, so a reader sees where the measurements are.
	markerMax = 12
)

// legendItem is one series' key, placed in the rows under the title: the
// legend never shares a line with the title, so a long title cannot run into it.
type legendItem struct{ x, y float64 }

func (c chart) legend() (items []legendItem, padT float64) {
	x, row := padL, 0
	for _, s := range c.Series {
		w := legendCharWidth*float64(len([]rune(s.Name))) + 16
		if x > padL && x+w > chartW-padR {
			x, row = padL, row+1
		}
		items = append(items, legendItem{x: x, y: titleY + legendRowHeight*float64(row+1)})
		x += w
	}
	rows := 0
	if len(items) > 0 {
		rows = row + 1
	}
	return items, titleY + legendRowHeight*float64(rows) + 12
}

func (c chart) svg() string {
	var b strings.Builder
	scale := "linear"
	if c.LogX {
		scale = "log"
	}
	fmt.Fprintf(&b, `<svg class="chart" id="%s" data-x-scale="%s" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s">`,
		html.EscapeString(c.ID), scale, chartW, chartH, html.EscapeString(c.Title))
	fmt.Fprintf(&b, `<text class="title" x="%.0f" y="%.0f">%s</text>`, padL, titleY, html.EscapeString(c.Title))
	area, ok := c.plotArea()
	if !ok || c.Empty != "" {
		msg := c.Empty
		if msg == "" {
			msg = emptyChartMessage
		}
		fmt.Fprintf(&b, `<text class="empty" x="%.0f" y="%.0f">%s</text></svg>`, chartW/2, chartH/2, html.EscapeString(msg))
		return b.String()
	}
	c.writeAxes(&b, area)
	c.writeSeries(&b, area)
	b.WriteString(`</svg>`)
	return b.String()
}

// plottable says whether a point can be drawn: finite, and above zero on a log axis.
func (c chart) plottable(p point) bool {
	return finite(p.X) && finite(p.Y) && (!c.LogX || p.X > 0)
}

// area is where a chart's points land: the data's range, rounded up to the
// top y tick, and the plot's place under the legend.
type area struct {
	minX, maxX, maxY float64
	logX             bool
	padT, plotH      float64
	yTicks           []float64
	legend           []legendItem
}

// plotArea fits the area to the plottable points; ok is false when there is none.
func (c chart) plotArea() (a area, ok bool) {
	minX, maxX, maxY := math.Inf(1), math.Inf(-1), 0.0
	for _, s := range c.Series {
		for _, p := range s.Points {
			if c.plottable(p) {
				minX, maxX, maxY = math.Min(minX, p.X), math.Max(maxX, p.X), math.Max(maxY, p.Y)
			}
		}
	}
	if math.IsInf(minX, 0) {
		return area{}, false
	}
	if maxX == minX {
		maxX = minX + 1
		if c.LogX {
			maxX = minX * 2
		}
	}
	if maxY <= 0 {
		maxY = 1
	}
	a = area{minX: minX, maxX: maxX, logX: c.LogX}
	a.legend, a.padT = c.legend()
	a.plotH = chartH - a.padT - padB
	a.yTicks = linearTicks(0, maxY, c.WholeY)
	a.maxY = a.yTicks[len(a.yTicks)-1]
	return a, true
}

func (a area) tx(x float64) float64 {
	if a.logX {
		return padL + plotW*(math.Log(x)-math.Log(a.minX))/(math.Log(a.maxX)-math.Log(a.minX))
	}
	return padL + plotW*(x-a.minX)/(a.maxX-a.minX)
}

func (a area) ty(y float64) float64 { return a.padT + a.plotH*(1-y/a.maxY) }

// writeAxes draws the plot's frame, its grid and ticks on round values, and
// the axis labels.
func (c chart) writeAxes(b *strings.Builder, a area) {
	fmt.Fprintf(b, `<rect class="plot" x="%.0f" y="%.0f" width="%.0f" height="%.0f"/>`, padL, a.padT, plotW, a.plotH)
	for _, y := range a.yTicks {
		fmt.Fprintf(b, `<line class="grid" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"/><text class="tick" data-axis="y" data-v="%g" x="%.1f" y="%.1f" text-anchor="end">%s</text>`,
			padL, padL+plotW, a.ty(y), a.ty(y), y, padL-4, a.ty(y)+3, html.EscapeString(c.FmtY(y)))
	}
	var xTicks []float64
	if c.LogX {
		xTicks = logTicks(a.minX, a.maxX)
	} else {
		xTicks = linearTicksWithin(a.minX, a.maxX, c.WholeX)
	}
	for _, x := range xTicks {
		fmt.Fprintf(b, `<text class="tick" data-axis="x" data-v="%g" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, x, a.tx(x), a.padT+a.plotH+14, html.EscapeString(c.FmtX(x)))
	}
	fmt.Fprintf(b, `<text class="axis" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, padL+plotW/2, chartH-6, html.EscapeString(c.XLabel))
	fmt.Fprintf(b, `<text class="axis" transform="translate(12,%.1f) rotate(-90)" text-anchor="middle">%s</text>`, a.padT+a.plotH/2, html.EscapeString(c.YLabel))
}

// writeSeries draws each series as a line (dashed where asked), marks the
// points of a short one, and writes its key in the legend.
func (c chart) writeSeries(b *strings.Builder, a area) {
	for i, s := range c.Series {
		col := palette[i%len(palette)]
		var pts []point
		for _, p := range s.Points {
			if c.plottable(p) {
				pts = append(pts, point{a.tx(p.X), a.ty(p.Y)})
			}
		}
		dash := ""
		if s.Dashed {
			dash = ` stroke-dasharray="5 3"`
		}
		if len(pts) > 1 {
			coords := make([]string, len(pts))
			for j, p := range pts {
				coords[j] = fmt.Sprintf("%.1f,%.1f", p.X, p.Y)
			}
			fmt.Fprintf(b, `<polyline class="series" data-series="%s" fill="none" stroke="%s" stroke-width="1.6"%s points="%s"/>`,
				html.EscapeString(s.Name), col, dash, strings.Join(coords, " "))
		}
		if len(pts) <= markerMax {
			for _, p := range pts {
				fmt.Fprintf(b, `<circle class="series" cx="%.1f" cy="%.1f" r="3" fill="%s"/>`, p.X, p.Y, col)
			}
		}
		it := a.legend[i]
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="10" height="3" fill="%s"/><text class="legend" x="%.1f" y="%.1f">%s</text>`,
			it.x, it.y-4, col, it.x+13, it.y, html.EscapeString(s.Name))
	}
}

// niceStep is the round step (1, 2, 2.5 or 5 times a power of ten) that
// cuts span into about n parts.
func niceStep(span float64, n int) float64 {
	raw := span / float64(n)
	if !(raw > 0) || math.IsInf(raw, 0) { // callers pass a finite, non-empty range; never loop on a zero step
		return 1
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	// The nearest of the round mantissas (split at their geometric means).
	switch f := raw / mag; {
	case f < 1.41:
		return mag
	case f < 2.24:
		return 2 * mag
	case f < 3.54:
		return 2.5 * mag
	case f < 7.07:
		return 5 * mag
	default:
		return 10 * mag
	}
}

// tickStep is the step of about four ticks over span; on an axis of whole
// things it is a whole number (no 2.5 VUs).
func tickStep(span float64, whole bool) float64 {
	step := niceStep(span, 4)
	switch {
	case !whole:
		return step
	case step < 1:
		return 1
	case step == 2.5:
		return 2
	}
	return step
}

// roundTo removes the float noise of k*step (0.30000000000000004).
func roundTo(v, step float64) float64 {
	d := math.Max(0, -math.Floor(math.Log10(step))+1)
	p := math.Pow(10, d)
	return math.Round(v*p)/p + 0 // + 0 turns -0 into 0 ("-0s" on an axis)
}

// linearTicks are round ticks from lo up to the first round value at or above hi:
// the axis grows to its last tick, so the top line is labelled.
func linearTicks(lo, hi float64, whole bool) []float64 {
	step := tickStep(hi-lo, whole)
	var out []float64
	for v := math.Floor(lo/step) * step; ; v += step {
		out = append(out, roundTo(v, step))
		if v >= hi-step*1e-9 {
			return out
		}
	}
}

// linearTicksWithin are the round ticks inside [lo, hi] (a data range the
// axis keeps, such as the run's seconds or the stages' VUs).
func linearTicksWithin(lo, hi float64, whole bool) []float64 {
	step := tickStep(hi-lo, whole)
	var out []float64
	for v := math.Ceil(lo/step-1e-9) * step; v <= hi+step*1e-9; v += step {
		out = append(out, roundTo(v, step))
	}
	return out
}

// logTicks are round ticks on a log axis: 1-2-5 of each decade inside
// [lo, hi], thinned to the powers of ten when that gives too many, and with
// 1-1.5-2-3-5-7 when the range is narrower than that.
func logTicks(lo, hi float64) []float64 {
	if !(lo > 0) || !(hi > lo) || math.IsInf(hi, 0) {
		return []float64{lo, hi}
	}
	pick := func(mant []float64) []float64 {
		var out []float64
		for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
			for _, m := range mant {
				v := m * math.Pow(10, e)
				if v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
					out = append(out, roundTo(v, math.Pow(10, e)))
				}
			}
		}
		return out
	}
	ticks := pick([]float64{1, 2, 5})
	switch {
	case len(ticks) > 7:
		if t := pick([]float64{1}); len(t) >= 3 {
			ticks = t
		} else {
			ticks = pick([]float64{1, 3})
		}
	case len(ticks) < 3:
		ticks = pick([]float64{1, 1.5, 2, 3, 5, 7})
	}
	if len(ticks) < 2 { // a range too narrow for any of them
		ticks = linearTicksWithin(lo, hi, false)
	}
	return ticks
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// histogramSeries turns a sketch into a share-per-bin curve on a log axis:
// sketch buckets are regrouped into `bins` equal log-width bins between lo and
// hi so that several categories line up on one chart.
func histogramSeries(name string, s *sketch.Sketch, lo, hi float64, bins int) series {
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
func histRange(sk ...*sketch.Sketch) (lo, hi float64) {
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
