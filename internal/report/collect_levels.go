package report

import (
	"time"
)

// levelInfo tracks how long and at which concurrency a class was used.
type levelInfo struct {
	Calls       uint64
	VUsSum      float64
	ActiveSum   float64
	E2ESumMS    float64 // over calls with an E2E, for the typical call duration
	E2ECalls    uint64
	First, Last time.Time
	// Steady time: spans of call starts no more than spanGap() apart, summed.
	spanStart, lastStart time.Time
	closedDur            time.Duration
}

// spanGap is how long starts may pause within one visit of the class.
func (l *levelInfo) spanGap() time.Duration {
	return max(minSpanGap, spanGapCalls*l.meanCall())
}

// meanCall is the mean E2E of the class's calls (0 before any).
func (l *levelInfo) meanCall() time.Duration {
	if l.E2ECalls == 0 {
		return 0
	}
	return time.Duration(l.E2ESumMS / float64(l.E2ECalls) * float64(time.Millisecond))
}

// steady is the time during which calls kept starting in this class.
func (l *levelInfo) steady() time.Duration { return l.closedDur + l.lastStart.Sub(l.spanStart) }

func (l *levelInfo) add(o *Observation) {
	l.Calls++
	l.VUsSum += level(o)
	l.ActiveSum += float64(o.Active)
	if v, ok := rowE2E.Kept(o); ok {
		l.E2ESumMS += v
		l.E2ECalls++
	}
	t := o.Start
	switch {
	case l.Calls == 1:
		l.spanStart, l.lastStart = t, t
	case t.After(l.lastStart):
		if t.Sub(l.lastStart) > l.spanGap() {
			l.closedDur += l.lastStart.Sub(l.spanStart)
			l.spanStart = t
		}
		l.lastStart = t
	case t.Before(l.spanStart) && l.spanStart.Sub(t) <= l.spanGap():
		l.spanStart = t // calls end out of order: an earlier start may arrive late
	}
	if l.First.IsZero() || o.Start.Before(l.First) {
		l.First = o.Start
	}
	if o.Start.After(l.Last) {
		l.Last = o.Start
	}
}

// Two visits of one class (a wave coming back to it) are told apart by a
// pause in its call starts longer than a few calls.
const (
	minSpanGap   = 2 * time.Second
	spanGapCalls = 3
)
