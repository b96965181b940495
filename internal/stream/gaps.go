package stream

import (
	"math"
	"time"
)

// Gaps are a call's inter-token gaps in microseconds, 4 bytes a gap: every call
// keeps all of its gaps whatever is sent to k6 (the report and result.gaps need
// them exact), and drops them with the call.
type Gaps []uint32

// compactGap rounds a gap to the microsecond; gaps over 71 minutes saturate.
func compactGap(d time.Duration) uint32 {
	us := (d + time.Microsecond/2) / time.Microsecond
	switch {
	case us <= 0:
		return 0
	case us >= math.MaxUint32:
		return math.MaxUint32
	}
	return uint32(us)
}

// At is the i-th gap.
func (g Gaps) At(i int) time.Duration { return time.Duration(g[i]) * time.Microsecond }

// GapsOf makes compact gaps of durations (tests and synthetic runs build
// observations with it).
func GapsOf(ds ...time.Duration) Gaps {
	g := make(Gaps, len(ds))
	for i, d := range ds {
		g[i] = compactGap(d)
	}
	return g
}

// Durations lists the gaps as durations.
func (g Gaps) Durations() []time.Duration {
	if g == nil {
		return nil
	}
	out := make([]time.Duration, len(g))
	for i, us := range g {
		out[i] = time.Duration(us) * time.Microsecond
	}
	return out
}

// countGap counts a gap into the call's mean and stalls (every answer's, with
// n > 1) and returns it compact, for the answer's own list.
func (c *Call) countGap(gap time.Duration) uint32 {
	c.gapSum += gap
	c.gapN++
	if c.cfg.StallThreshold > 0 && gap > c.cfg.StallThreshold {
		c.stalls++
	}
	return compactGap(gap)
}
