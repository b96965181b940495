package report

import (
	"fmt"
	"math"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
)

// A wave is a burst of load on top of a steadier level: concurrency rises
// well above what it was, then comes back down. What users need to know is
// how long the service takes to recover once the burst is over: queued work
// drains and caches refill while the load is already low again. The report
// measures it as the time from the load coming back down to the first window
// in which the TTFT median is again within a margin of its pre-burst level.

const (
	waveRise       = 1.5             // a burst is concurrency ≥ ×1.5 the level before…
	waveRiseMin    = 2               // …and at least 2 more
	waveBackWithin = 1.2             // it is over when concurrency is back to ≤ ×1.2 (+1) the level before
	waveQuiet      = 5 * time.Second // the level before must have held this long
	waveWindow     = 2 * time.Second // TTFT medians are read over windows this wide…
	waveMinCalls   = 4               // …of at least this many calls (widened back until they have them)
	// RecoveryMargin is how close the TTFT median must come back to its
	// pre-burst level: within 25 %, or within recoveryFloorMS for fast
	// services, or within one decode step (below).
	RecoveryMargin  = 0.25
	recoveryFloorMS = 10.0
)

// A batching engine admits a waiting request only between decode steps, so
// a request waits for the step in flight to end: anything from nothing to a
// whole step. Closed-loop VUs fall into step with the engine, and which
// phase they settle in is chance: with two VUs on a 17 ms step the TTFT
// median sits at 17 ms in one run and 32 ms in the next, and can move from
// one to the other across a burst. A median one step above the level
// before is that phase, not a service still recovering; the step is read
// as the median inter-token gap before the burst.
func recoveryLimit(before, step float64) float64 {
	limit := math.Max(before*(1+RecoveryMargin), before+recoveryFloorMS)
	if step > 0 { // false for NaN: no gaps before the burst
		limit = math.Max(limit, before+step)
	}
	return limit
}

// Wave is one burst and the recovery after it.
type Wave struct {
	Start, End       time.Time // first bucket of raised load; first bucket back at the level before
	Base, Peak       float64   // load level (VUs, or req/s when ByRate) before and at the top of the burst
	ByRate           bool
	BeforeTTFTP50    float64 // ms, over the steady stretch before the burst
	PeakTTFTP50      float64 // ms, highest windowed median from the burst start to recovery
	Recovered        bool
	Recovery         time.Duration // End → first window back within the margin (when Recovered)
	ObservedAfter    time.Duration // how long the run went on after End
	RecoveryLimitMS  float64       // the TTFT median that counts as recovered
	recoveredAtIndex int
}

// Waves finds the bursts of a run and how long TTFT took to recover after each.
func (r *Run) Waves() []Wave {
	tl := r.Timeline
	if tl == nil || len(tl.Buckets) == 0 {
		return nil
	}
	n := len(tl.Buckets)
	per := func(d time.Duration) int { return max(1, int(math.Ceil(float64(d)/float64(tl.Width)))) }
	quiet, win := per(waveQuiet), per(waveWindow)
	conc := make([]float64, n) // concurrency of call starts, carried over seconds without one
	last := -1.0
	for i := range tl.Buckets {
		if b := &tl.Buckets[i]; b.Requests > 0 {
			last = b.LevelMax
		}
		conc[i] = last
	}
	ttft := func(b *Bucket) *sketch.Sketch { return b.TTFT }
	var out []Wave
	for i := quiet; i < n; i++ {
		// A steady stretch before i: every bucket within ×1.2 (+1) of its lowest.
		base, top := math.Inf(1), 0.0
		for _, c := range conc[i-quiet : i] {
			base, top = math.Min(base, c), math.Max(top, c)
		}
		if base <= 0 || top > waveBackWithin*base+1 || conc[i] < math.Max(waveRise*base, base+waveRiseMin) {
			continue
		}
		end := i
		for end < n && conc[end] > waveBackWithin*base+1 {
			end++
		}
		if end >= n {
			break // the run ended during the burst: nothing to recover from yet
		}
		before := tl.window(i-quiet, i, ttft)
		if before.Count() < waveMinCalls {
			i = end
			continue
		}
		w := Wave{
			Start: tl.BucketStart(i), End: tl.BucketStart(end), Base: base, ByRate: isRateClass(tl.Buckets[i].ClassMax),
			BeforeTTFTP50: q50(before), ObservedAfter: tl.BucketStart(n).Sub(tl.BucketStart(end)),
		}
		for _, c := range conc[i:end] {
			w.Peak = math.Max(w.Peak, c)
		}
		w.RecoveryLimitMS = recoveryLimit(w.BeforeTTFTP50, q50(tl.window(i-quiet, i, func(b *Bucket) *sketch.Sketch { return b.Gap })))
		// Windows look back from k, so a window that reads "recovered" holds
		// no call started after k: the recovery time errs late by at most a
		// window, never early. After the burst they do not reach back into it.
		for k := i; k < n; k++ {
			from, floor := k+1-win, i
			if k >= end {
				floor = end
			}
			from = max(from, floor)
			s := tl.window(from, k+1, ttft)
			for s.Count() < waveMinCalls && from > floor {
				from--
				s = tl.window(from, k+1, ttft)
			}
			if s.Count() < waveMinCalls {
				continue
			}
			med := q50(s)
			w.PeakTTFTP50 = math.Max(w.PeakTTFTP50, med)
			if k >= end && med <= w.RecoveryLimitMS {
				w.Recovered, w.Recovery, w.recoveredAtIndex = true, tl.BucketStart(k+1).Sub(w.End), k
				break
			}
		}
		out = append(out, w)
		i = max(end, w.recoveredAtIndex) // the next burst starts after this one settled
	}
	return out
}

// Describe is the wave in one line of text.
func (w Wave) Describe(origin time.Time) string {
	s := fmt.Sprintf("burst %.0fs–%.0fs (%s → %s %s): TTFT P50 %s before, %s at worst; ",
		w.Start.Sub(origin).Seconds(), w.End.Sub(origin).Seconds(), runrecord.FormatConc(runrecord.RoundLevel(w.Base)), runrecord.FormatConc(runrecord.RoundLevel(w.Peak)), runrecord.LevelUnit(w.ByRate),
		fmtMS(w.BeforeTTFTP50), fmtMS(w.PeakTTFTP50))
	if !w.Recovered {
		return s + fmt.Sprintf("not back to its level (≤ %s) in the %s the run went on after the load came down",
			fmtMS(w.RecoveryLimitMS), fmtDur(w.ObservedAfter))
	}
	return s + fmt.Sprintf("back to its level (≤ %s) %s after the load came down",
		fmtMS(w.RecoveryLimitMS), fmtDur(w.Recovery))
}
