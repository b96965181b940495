package sim

import "time"

// traceEpoch anchors every stamp the simulator writes (trace, Server-Timing,
// the vLLM histograms) to the wall clock once, when the process starts; after
// it a stamp is the epoch's Unix time plus the monotonic time since. Reading
// the wall clock for each stamp instead would let a step of it (NTP setting
// the clock mid-run) land between two stamps of one request, and the trace's
// phase durations would then disagree with the histograms, which measure on
// the monotonic clock, by the step. The monotonic clock is slewed as the wall
// clock is, so the two drift apart only by steps: the stamps stay Unix times,
// off from the wall clock by the steps taken since the process started.
var traceEpoch = time.Now() //nolint:gochecknoglobals // one epoch for the process: every stamp must share it

// unixNano is t as a trace stamp: Unix nanoseconds on the epoch's timeline;
// 0 for the zero time. A time without a monotonic reading (FakeClock's, or
// one built from a Unix time) is measured from the epoch on the wall clock,
// which makes the stamp its own UnixNano.
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return traceEpoch.UnixNano() + int64(t.Sub(traceEpoch))
}

// nowNS is the trace stamp of now.
func nowNS() int64 { return unixNano(time.Now()) }
