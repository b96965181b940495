package policy

import (
	"sync/atomic"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/report"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// A call that met more than LagWarnAt of the process's own lag logs a
// warning, at most once every LagWarnEvery in the process: past it a call's
// timings are off by more than the figures they are read against (a token
// gap of tens of ms, a TTFT of a few hundred).
const (
	LagWarnAt    = 25 * time.Millisecond
	LagWarnEvery = 30 * time.Second
)

// TTFTWindow is how many judged calls NoteTTFT weighs at once: the report's
// rule (report.LateTTFTMin late calls, and report.LateTTFTShare of them)
// over the last 300 calls.
const TTFTWindow = 300

// Logger is where the warnings go (k6's VU logger).
type Logger interface {
	Warnf(format string, args ...any)
}

// LagWarning tells the user while the test runs that this load generator is
// running late, so its latencies are inflated. One is shared by every VU of
// the process.
type LagWarning struct {
	last                         atomic.Int64 // when the last warning was logged, ns
	judged, lateReads, lateSends atomic.Int64 // NoteTTFT's window
}

// due says whether a warning may be logged now (one per LagWarnEvery in the
// process, whichever kind), and claims the slot.
func (w *LagWarning) due() bool {
	now, last := time.Now().UnixNano(), w.last.Load()
	return now-last >= int64(LagWarnEvery) && w.last.CompareAndSwap(last, now)
}

// Check warns when a call met lag of LagWarnAt or more.
func (w *LagWarning) Check(log Logger, lag time.Duration) {
	if lag < LagWarnAt || log == nil || !w.due() {
		return
	}
	log.Warnf("llmstream: this load generator ran %s late while a call was in flight (Go scheduler latency, "+
		"timer lateness): client-side timings are inflated by up to that much. Give k6 more CPU or split the test "+
		"across instances; llm_client_lag has the figure of every call", lag.Round(time.Millisecond))
}

// NoteTTFT counts the calls whose TTFT could be judged, and those this
// process made late (stream.TTFTCheck: the first token read with the next,
// the request sent late), and warns when the last TTFTWindow would make the
// report's client_bound rule fire: single late calls happen, a share of them
// means this process is late whenever calls start or first tokens come (calls
// that start and end together meet it even when llm_client_lag is low).
func (w *LagWarning) NoteTTFT(log Logger, check stream.TTFTCheck) {
	if _, known := check.Late(); !known {
		return
	}
	switch check { //nolint:exhaustive // judged calls only: on time adds nothing but the count
	case stream.TTFTReadLate:
		w.lateReads.Add(1)
	case stream.TTFTSentLate:
		w.lateSends.Add(1)
	}
	if w.judged.Add(1) < TTFTWindow {
		return
	}
	n, reads, sends := w.judged.Swap(0), w.lateReads.Swap(0), w.lateSends.Swap(0)
	if log == nil || !report.LateTTFTsBound(uint64(reads+sends), uint64(n)) || !w.due() { // #nosec G115 -- counts
		return
	}
	log.Warnf("llmstream: of the last %d calls, %d read their first token together with the next one (which had "+
		"arrived a decode step later) and %d sent their request half a decode step or more late: this load "+
		"generator was running late just then, and those TTFTs are over by that much. Spread the calls (ramp "+
		"the VUs up rather than starting them together, mixed prompts, an arrival-rate executor), give k6 more CPU or split the test; llm_ttft_late counts them",
		n, reads, sends)
}
