package report

import (
	"math"
	"sort"
	"time"
)

// A load stage is a window of steady concurrency. Calls are keyed by the
// concurrency class they started in, not by time, so that a step load, a
// scenario sequence and a wave that revisits a level all land on the same
// points of a "latency against concurrency" curve. A class only counts as a
// stage when calls kept starting in it for long enough: a ramp passes through
// each class in about one second and is left out.

// concurrencyClass maps a VU count to its class: exact up to 20, then a 5 %
// logarithmic grid, so a ramp to 10 000 VUs makes at most ~130 classes.
func concurrencyClass(v int) int {
	if v <= 20 {
		return max(v, 0)
	}
	return 20 + int(math.Round(math.Log(float64(v)/20)/math.Log(1.05)))
}

// levelInfo tracks how long and at which concurrency a class was used.
type levelInfo struct {
	Calls       uint64
	VUsSum      float64
	ActiveSum   float64
	First, Last time.Time
	// Steady time: spans of call starts no more than spanGap apart, summed.
	spanStart, lastStart time.Time
	closedDur            time.Duration
}

// spanGap separates two visits of one class (a wave coming back to it).
const spanGap = 30 * time.Second

// steady is the time during which calls kept starting in this class.
func (l *levelInfo) steady() time.Duration { return l.closedDur + l.lastStart.Sub(l.spanStart) }

func (l *levelInfo) add(o *Observation) {
	l.Calls++
	l.VUsSum += float64(o.concurrency())
	l.ActiveSum += float64(o.Active)
	t := o.Start
	switch {
	case l.Calls == 1:
		l.spanStart, l.lastStart = t, t
	case t.After(l.lastStart):
		if t.Sub(l.lastStart) > spanGap {
			l.closedDur += l.lastStart.Sub(l.spanStart)
			l.spanStart = t
		}
		l.lastStart = t
	case t.Before(l.spanStart) && l.spanStart.Sub(t) <= spanGap:
		l.spanStart = t // calls end out of order: an earlier start may arrive late
	}
	if l.First.IsZero() || o.Start.Before(l.First) {
		l.First = o.Start
	}
	if o.Start.After(l.Last) {
		l.Last = o.Start
	}
}

// Stage is a concurrency class with enough steady time to be compared with others.
type Stage struct {
	Class       int     // key of the class (internal)
	Concurrency float64 // mean VUs (or streams in flight) at call start
	Active      float64 // mean streams in flight in this process at call start
	Calls       uint64
	Steady      time.Duration // time during which calls kept starting in this stage
	First, Last time.Time     // first and last call start
	All         *Group        // every category and model merged
	ByCategory  map[string]*Group
	// Throughput is completed calls (and output tokens) per second while the
	// stage's load was on (stage_throughput.go).
	RequestsPerSec, OutputTokensPerSec float64
}

// Stages returns the steady stages, lowest concurrency first.
func (r *Run) Stages() []*Stage {
	var out []*Stage
	for class, li := range r.levels {
		if li.steady() < r.opt.MinStage || li.Calls == 0 {
			continue
		}
		st := &Stage{
			Class: class, Calls: li.Calls, Steady: li.steady(), First: li.First, Last: li.Last,
			Concurrency: li.VUsSum / float64(li.Calls), Active: li.ActiveSum / float64(li.Calls),
			All: newGroup(), ByCategory: map[string]*Group{},
		}
		for k, g := range r.groups {
			if k.Level != class {
				continue
			}
			st.All.merge(g)
			cg := st.ByCategory[k.Category]
			if cg == nil {
				cg = newGroup()
				st.ByCategory[k.Category] = cg
			}
			cg.merge(g)
		}
		r.measureThroughput(st)
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Concurrency < out[j].Concurrency })
	return out
}
