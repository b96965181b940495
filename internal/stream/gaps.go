package stream

import (
	"math"
	"slices"
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

// minGapsForFirstRead is how many gaps an answer needs before its first can
// be judged: the others must show how the server sent them.
const minGapsForFirstRead = 3

// FirstRead is what an answer's reads say of its first token's time.
type FirstRead uint8

const (
	// FirstReadUnjudged: too few gaps, or a server that sends in bursts.
	FirstReadUnjudged FirstRead = iota
	// FirstReadOnTime: the first token was read on its own, or with the
	// next one that the server had sent with it.
	FirstReadOnTime
	// FirstReadLate: the first token was read together with the next one,
	// which the server had sent a decode step later, and dated by it.
	FirstReadLate
)

func (f FirstRead) String() string {
	switch f {
	case FirstReadOnTime:
		return "on time"
	case FirstReadLate:
		return "late"
	}
	return "not judged"
}

// Late is the judgement as result.ttftLate gives it: known is false when the
// answer could not be judged.
func (f FirstRead) Late() (late, known bool) {
	return f == FirstReadLate, f != FirstReadUnjudged
}

// judgeFirstRead judges an answer's first output event by its gaps and by
// window, how long before its time the bytes of the read that carried it may
// have come (known: the connection was watched).
//
// Events framed from one read carry that read's time, so a first gap of zero
// means the first two had both arrived when the reader got to them. A server
// that sent the rest apart usually sent those two apart too, a decode step or
// more, and the first event is then dated by the second: the TTFT is over by
// that much. This is the client running late just as the first token came
// (many calls ending and starting at once); it is a fact of the reads, not an
// estimate. But a server can also send its first two tokens together (one
// starved of CPU does): then both came within the window, and a window under
// half the decode step (the median of the other gaps) says they did; only a
// watcher that looked late leaves it open. A server or gateway that sends in
// bursts makes most gaps zero: then, and with fewer than minGapsForFirstRead
// gaps, the answer is not judged.
func (g Gaps) judgeFirstRead(window time.Duration, known bool) FirstRead {
	if len(g) < minGapsForFirstRead {
		return FirstReadUnjudged
	}
	zero := 0
	for _, us := range g[1:] {
		if us == 0 {
			zero++
		}
	}
	switch {
	case 2*zero >= len(g)-1:
		return FirstReadUnjudged
	case g[0] != 0:
		return FirstReadOnTime
	case known && window < g[1:].median()/2:
		return FirstReadOnTime
	}
	return FirstReadLate
}

// median is the middle gap (the upper one of an even count).
func (g Gaps) median() time.Duration {
	s := slices.Clone(g)
	slices.Sort(s)
	return s.At(len(s) / 2)
}
