package energy

import (
	"math"
	"sort"
	"sync"
	"time"
)

// Reading is one GPU at one scrape. A value the exporter did not give is NaN.
type Reading struct {
	GPU      string  // a stable identity: the UUID label, else host and gpu index
	PowerW   float64 // instantaneous power, W
	EnergyMJ float64 // energy counter, mJ since the GPU's boot
}

// Sources of a GPU's energy.
const (
	SourceCounter = "counter" // the energy counter's deltas
	SourcePower   = "power"   // the power gauge, integrated
)

// point is a GPU's cumulative energy (J since the meter first saw it) at a time.
type point struct {
	at time.Time
	j  float64
}

type gpu struct {
	source  string // decided at the first reading: the counter when there is one
	points  []point
	last    Reading
	resets  []time.Time // when the counter restarted
	missing bool        // absent from the latest scrape
}

// Meter accumulates the readings of one exporter. Safe for concurrent use
// (scrapes arrive on their own goroutine, the report reads from another).
type Meter struct {
	mu   sync.Mutex
	gpus map[string]*gpu
	// lost names GPUs that were seen and then vanished from a scrape: their
	// energy after their last reading is unknown, and says so.
	lost []string
}

// NewMeter returns an empty meter.
func NewMeter() *Meter { return &Meter{gpus: map[string]*gpu{}} }

// Scrape adds one scrape's readings, taken at at.
func (m *Meter) Scrape(at time.Time, readings []Reading) {
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := make(map[string]bool, len(readings))
	for _, r := range readings {
		if r.GPU == "" || seen[r.GPU] {
			continue
		}
		seen[r.GPU] = true
		m.add(at, r)
	}
	for name, g := range m.gpus {
		if !seen[name] && !g.missing {
			g.missing = true
			m.lost = append(m.lost, name)
		}
	}
}

func (m *Meter) add(at time.Time, r Reading) {
	g := m.gpus[r.GPU]
	if g == nil {
		src := SourcePower
		if finite(r.EnergyMJ) {
			src = SourceCounter
		} else if !finite(r.PowerW) {
			return // neither figure: nothing to start from
		}
		m.gpus[r.GPU] = &gpu{source: src, points: []point{{at: at}}, last: r}
		return
	}
	g.missing = false
	prev := g.points[len(g.points)-1]
	if !at.After(prev.at) {
		return
	}
	var dj float64
	switch g.source {
	case SourceCounter:
		if !finite(r.EnergyMJ) {
			return // this scrape lacks the counter: the next one's delta covers the span
		}
		d := r.EnergyMJ - g.last.EnergyMJ
		if d < 0 { // the counter restarted (a GPU reset or the exporter's restart): count from zero
			d = r.EnergyMJ
			g.resets = append(g.resets, at)
		}
		dj = d / 1000
	case SourcePower:
		if !finite(r.PowerW) {
			return
		}
		dj = (g.last.PowerW + r.PowerW) / 2 * at.Sub(prev.at).Seconds()
	}
	g.points = append(g.points, point{at: at, j: prev.j + dj})
	g.last = r
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Span is the energy of a span of the run, summed over the GPUs.
type Span struct {
	Joules    float64  // NaN when no GPU covered the span
	AvgPowerW float64  // Joules over the span's length
	GPUs      int      // GPUs whose readings covered the span
	Sources   []string // how their energy was read (counter, power), sorted, each once
	// Partial names GPUs whose readings covered only part of the span (they
	// appeared or vanished in it): their energy there is counted for the
	// covered part only.
	Partial []string
	Resets  int // counter restarts inside the span, counted from zero
}

// Energy is the energy used between from and to: each GPU's cumulative
// series read at both ends (linear between scrapes, which is exact for a
// counter's total over whole scrapes and the trapezoid rule's own
// assumption for power).
func (m *Meter) Energy(from, to time.Time) Span {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := Span{Joules: math.NaN(), AvgPowerW: math.NaN()}
	if !to.After(from) {
		return s
	}
	sources := map[string]bool{}
	names := make([]string, 0, len(m.gpus))
	for name := range m.gpus {
		names = append(names, name)
	}
	sort.Strings(names)
	total := 0.0
	for _, name := range names {
		g := m.gpus[name]
		first, last := g.points[0], g.points[len(g.points)-1]
		if len(g.points) < 2 || !last.at.After(from) || !first.at.Before(to) {
			continue
		}
		a, b := maxTime(from, first.at), minTime(to, last.at)
		total += cumulative(g.points, b) - cumulative(g.points, a)
		s.GPUs++
		sources[g.source] = true
		if a.After(from) || b.Before(to) {
			s.Partial = append(s.Partial, name)
		}
		s.Resets += resetsIn(g, a, b)
	}
	if s.GPUs == 0 {
		return s
	}
	s.Joules = total
	s.AvgPowerW = total / to.Sub(from).Seconds()
	for src := range sources {
		s.Sources = append(s.Sources, src)
	}
	sort.Strings(s.Sources)
	return s
}

// resetsIn counts a GPU's counter restarts seen by a scrape in (a, b].
func resetsIn(g *gpu, a, b time.Time) int {
	n := 0
	for _, at := range g.resets {
		if at.After(a) && !at.After(b) {
			n++
		}
	}
	return n
}

// cumulative reads the series at t (clamped to its ends), linear between points.
func cumulative(ps []point, t time.Time) float64 {
	i := sort.Search(len(ps), func(i int) bool { return !ps[i].at.Before(t) })
	switch {
	case i == 0:
		return ps[0].j
	case i == len(ps):
		return ps[len(ps)-1].j
	}
	p, q := ps[i-1], ps[i]
	f := t.Sub(p.at).Seconds() / q.at.Sub(p.at).Seconds()
	return p.j + f*(q.j-p.j)
}

// Lost names the GPUs that vanished from a scrape after being seen, in the
// order they did.
func (m *Meter) Lost() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.lost...)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
