package capacity

import "math"

// point is one observation of a figure inside a window: x in seconds from
// the window's start, known when it was learnt (a TTFT at its call's end).
type point struct{ x, y, known float64 }

// trend is an ordinary least-squares line through a window's points.
type trend struct {
	n     int
	slope float64 // per second
	se    float64 // the slope's standard error
	base  float64 // the fitted value at the first point
	rise  float64 // slope × the points' span
}

// minTrendPoints is the fewest points a slope is tested on.
const minTrendPoints = 8

// fit is the least-squares line through pts (x up to until only).
func fit(pts []point, from, until float64) trend {
	var n, sx, sy float64
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range pts {
		if p.x < from || p.known > until {
			continue
		}
		n++
		sx += p.x
		sy += p.y
		lo, hi = min(lo, p.x), max(hi, p.x)
	}
	t := trend{n: int(n)}
	if t.n < minTrendPoints {
		return t
	}
	mx, my := sx/n, sy/n
	var sxx, sxy, syy float64
	for _, p := range pts {
		if p.x < from || p.known > until {
			continue
		}
		dx, dy := p.x-mx, p.y-my
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
	}
	if sxx < 1e-12 {
		t.n = 0
		return t
	}
	t.slope = sxy / sxx
	resid := max(syy-sxy*sxy/sxx, 0)
	t.se = math.Sqrt(resid / (n - 2) / sxx)
	t.base = my + t.slope*(lo-mx)
	t.rise = t.slope * (hi - lo)
	return t
}

// rising says whether the line climbs significantly (one-sided t-test at
// 99 %) and by at least rel of its starting value and abs in its own unit:
// a small but significant slope over thousands of points is not a queue.
func (t trend) rising(rel, abs float64) bool {
	if t.n < minTrendPoints || !(t.slope > 0) {
		return false
	}
	significant := t.se == 0 || t.slope/t.se > tCrit99(t.n-2)
	return significant && t.rise >= rel*math.Max(t.base, 0) && t.rise >= abs
}

// tCrit99 is Student's t one-sided 99 % critical value for df degrees of
// freedom (the Cornish-Fisher expansion around the normal's 2.326: within
// 1 % of the table from 6 degrees of freedom on, conservative below).
func tCrit99(df int) float64 {
	const z = 2.3263
	d := float64(max(df, 1))
	return z + (z*z*z+z)/(4*d) + (5*math.Pow(z, 5)+16*z*z*z+3*z)/(96*d*d)
}
