package schedule

import (
	"math"
	"time"
)

// warp maps a source's positions to offsets from the schedule's start: it
// runs at speed positions per second, from one change to the next. Synthetic
// sources count arrivals at unit rate (speed = the rate in credits/s); a
// trace counts its own seconds (speed = the time multiplier).
type warp struct {
	segs []warpSeg // ascending in at and pos
}

type warpSeg struct {
	at    time.Duration // offset where this speed starts
	pos   float64       // the position reached at that offset
	speed float64       // positions per second; 0: held (Hold)
}

// never is the offset of a position a held clock does not reach until its
// speed is set again.
const never = time.Duration(math.MaxInt64)

func newWarp(speed float64) warp { return warp{segs: []warpSeg{{speed: speed}}} }

// offset is when position pos is reached.
func (w *warp) offset(pos float64) time.Duration {
	i := len(w.segs) - 1
	for i > 0 && w.segs[i].pos > pos {
		i--
	}
	s := w.segs[i]
	if s.speed == 0 {
		if pos <= s.pos {
			return s.at
		}
		return never
	}
	return s.at + time.Duration((pos-s.pos)/s.speed*float64(time.Second))
}

// position is where the clock is at offset at.
func (w *warp) position(at time.Duration) float64 {
	i := len(w.segs) - 1
	for i > 0 && w.segs[i].at > at {
		i--
	}
	s := w.segs[i]
	return s.pos + (at-s.at).Seconds()*s.speed
}

// change sets the speed from offset at on. The caller keeps at at or after
// every offset already handed out; at the last change's offset the change
// replaces it.
func (w *warp) change(speed float64, at time.Duration) {
	last := &w.segs[len(w.segs)-1]
	if at <= last.at {
		last.speed = speed
		return
	}
	w.segs = append(w.segs, warpSeg{at: at, pos: w.position(at), speed: speed})
}

// speed is the speed at offset at.
func (w *warp) speed(at time.Duration) float64 {
	i := len(w.segs) - 1
	for i > 0 && w.segs[i].at > at {
		i--
	}
	return w.segs[i].speed
}
