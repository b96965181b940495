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

// minGapsForFirstRead is how many gaps an answer needs before FirstReadLate
// can judge its first: the others must show how the server sent them.
const minGapsForFirstRead = 3

// FirstReadLate says whether an answer's first output event was read together
// with the next one while its other events came one read each. Events framed
// from one read carry that read's time, so a first gap of zero means both had
// arrived before the reader got to them. A server that sent the rest apart
// sent those two apart too, a decode step or more, and the first event is then
// dated by the second: the TTFT is over by that much. This is the client
// running late just as the first token came (many calls ending and starting
// at once); it is a fact of the reads, not an estimate. A server or gateway
// that sends in bursts makes most gaps zero: then, and with fewer than
// minGapsForFirstRead gaps, known is false.
func (g Gaps) FirstReadLate() (late, known bool) {
	if len(g) < minGapsForFirstRead {
		return false, false
	}
	zero := 0
	for _, us := range g[1:] {
		if us == 0 {
			zero++
		}
	}
	if 2*zero >= len(g)-1 {
		return false, false
	}
	return g[0] == 0, true
}
