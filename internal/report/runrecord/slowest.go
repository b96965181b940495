package runrecord

import (
	"slices"
	"strings"
)

// SlowestKept is how many of a category's slowest traced calls the record
// keeps: enough to open the worst few server-side traces, and a bound that
// keeps a record's size independent of the run's length.
const SlowestKept = 5

// SlowCall is one of a category's slowest answered calls that carried a
// trace context: its trace id, which a tracing backend (OpenTelemetry on
// the gateway or the engine) opens, beside its client-side times.
type SlowCall struct {
	TraceID string   `json:"trace_id"`
	E2EMS   float64  `json:"e2e_ms"`
	TTFTMS  *float64 `json:"ttft_ms"` // null when the call had no first token time
}

// SlowCalls is a bounded top-k by E2E, slowest first. The zero value is
// empty and ready; Add and Merge keep at most SlowestKept calls, so merging
// the records of several k6 instances keeps the slowest of them all.
type SlowCalls []SlowCall

// Add offers one call: kept when it is among the slowest so far.
func (s *SlowCalls) Add(c SlowCall) {
	i, _ := slices.BinarySearchFunc(*s, c, slowerFirst)
	if i >= SlowestKept {
		return
	}
	*s = slices.Insert(*s, i, c)
	if len(*s) > SlowestKept {
		*s = (*s)[:SlowestKept]
	}
}

// Merge keeps the slowest of both.
func (s *SlowCalls) Merge(o SlowCalls) {
	for _, c := range o {
		s.Add(c)
	}
}

// Clone is a copy that Add and Merge on either leave the other untouched.
func (s SlowCalls) Clone() SlowCalls { return slices.Clone(s) }

// slowerFirst orders by E2E descending, then by trace id, so the same calls
// always list in the same order, however they were merged.
func slowerFirst(a, b SlowCall) int {
	switch {
	case a.E2EMS > b.E2EMS:
		return -1
	case a.E2EMS < b.E2EMS:
		return 1
	}
	return strings.Compare(a.TraceID, b.TraceID)
}
