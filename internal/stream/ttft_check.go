package stream

import (
	"slices"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/measure"
)

// Whether this process made a call's TTFT late, judged once when the call
// ends (Result.TTFTCheck) from what only the call saw: its gaps, the window
// of the read that carried its first token, and when its request began to go
// out. result.ttftLate, llm_ttft_late, the report's client_bound rule and
// k6's warning only read the judgement.

// minGapsForTTFTCheck is how many gaps an answer needs before its TTFT can be
// judged: the others must show how the server sent them, and the decode step
// they show is the scale of "late".
const minGapsForTTFTCheck = 3

// minSendLate is the least send wait that counts as late, however short the
// decode step: a server whose tokens come microseconds apart does not make
// every request late.
const minSendLate = time.Millisecond

// TTFTCheck is what a call's own timings say of its TTFT.
type TTFTCheck uint8

const (
	// TTFTUnjudged: too few gaps, or a server that sends in bursts.
	TTFTUnjudged TTFTCheck = iota
	// TTFTOnTime: the request went out at once and the first token was read
	// on its own, or with the next one that the server had sent with it.
	TTFTOnTime
	// TTFTReadLate: the first token was read together with the next one,
	// which the server had sent a decode step later, and dated by it.
	TTFTReadLate
	// TTFTSentLate: the request began to go out half a decode step or more
	// after t0, connection set-up left out: the process was busy.
	TTFTSentLate
)

func (t TTFTCheck) String() string {
	switch t {
	case TTFTOnTime:
		return "on time"
	case TTFTReadLate:
		return "first token read late"
	case TTFTSentLate:
		return "request sent late"
	}
	return "not judged"
}

// Late is the judgement as result.ttftLate gives it: known is false when the
// call could not be judged.
func (t TTFTCheck) Late() (late, known bool) {
	return t == TTFTReadLate || t == TTFTSentLate, t != TTFTUnjudged
}

// checkTTFT judges a call's TTFT by its gaps; by window, how long before its
// time the bytes of the read that carried the first output event may have
// come (windowKnown: the connection was watched); and by sendWait, how long
// after t0 the request began to go out, connection set-up left out (none
// when not known: nothing then says it went out late).
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
// watcher that looked late leaves it open.
//
// On the other side of the TTFT, a request is handed to the transport at t0
// and its bytes go out when the transport's writing goroutine runs: when many
// calls end at once that goroutine waits for a CPU, and the wait is in the
// TTFT. A wait of half a decode step (and at least minSendLate) counts as
// late: the bar a late read's window is held to.
//
// A server or gateway that sends in bursts makes most gaps zero: then, and
// with fewer than minGapsForTTFTCheck gaps, the call is not judged.
func (g Gaps) checkTTFT(window time.Duration, windowKnown bool, sendWait measure.Duration) TTFTCheck {
	if len(g) < minGapsForTTFTCheck {
		return TTFTUnjudged
	}
	wait := sendWait.Or(0)
	zero := 0
	for _, us := range g[1:] {
		if us == 0 {
			zero++
		}
	}
	if 2*zero >= len(g)-1 {
		return TTFTUnjudged
	}
	if g[0] != 0 && wait < minSendLate {
		return TTFTOnTime // the common case, without sorting the gaps
	}
	halfStep := g[1:].median() / 2
	switch {
	case g[0] == 0 && (!windowKnown || window >= halfStep): // nothing says the two came together
		return TTFTReadLate
	case wait >= max(halfStep, minSendLate):
		return TTFTSentLate
	}
	return TTFTOnTime
}

// median is the middle gap (the upper one of an even count).
func (g Gaps) median() time.Duration {
	s := slices.Clone(g)
	slices.Sort(s)
	return s.At(len(s) / 2)
}
