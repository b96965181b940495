package runrecord

import (
	"fmt"
	"time"
)

// How a run can be stopped before its planned end (Interruption.By).
const (
	StoppedBySignal    = "signal"       // SIGINT (Ctrl+C) or SIGTERM
	StoppedByAbort     = "test.abort()" // the script, k6/execution's test.abort()
	StoppedByThreshold = "threshold"    // a threshold with abortOnFail
	StoppedByK6        = "k6"           // k6 for another reason (a script error in setup(), an output, the REST API)
)

// Interruption says that a run was stopped before its planned end, when and
// why, how long it ran against how long it was planned to, and how many
// calls the stop cut in flight. Its figures cover the part that ran: a
// comparison with a baseline says so.
type Interruption struct {
	At     time.Time `json:"at"`
	By     string    `json:"by"`               // one of the StoppedBy values
	Detail string    `json:"detail,omitempty"` // "SIGINT", test.abort()'s message, the threshold
	// RanS is how long the test ran, from its start to the stop.
	RanS float64 `json:"ran_s"`
	// PlannedS is how long it was planned to run (its scenarios' start
	// times and durations, graceful stops left out); null when unknown.
	// PlannedAtMost: the plan is a bound only (an iterations executor's
	// maxDuration).
	PlannedS      *float64 `json:"planned_s"`
	PlannedAtMost bool     `json:"planned_at_most,omitempty"`
	// Canceled counts the calls the stop cut in flight: failed calls with
	// the error type canceled, in no latency figure.
	Canceled uint64 `json:"canceled"`
}

// Why is the cause in words: "a signal (SIGINT)", "test.abort(): no
// model", "a threshold with abortOnFail (llm_failed: rate<0.1)".
func (i *Interruption) Why() string {
	what := map[string]string{
		StoppedBySignal: "a signal", StoppedByAbort: "test.abort()", StoppedByThreshold: "a threshold with abortOnFail",
		StoppedByK6: "k6 (not a signal, test.abort() or a threshold: a script error in setup(), an output or the REST API)",
	}[i.By]
	if what == "" {
		what = i.By
	}
	switch {
	case i.Detail == "":
		return what
	case i.By == StoppedByAbort:
		return what + ": " + i.Detail
	}
	return what + " (" + i.Detail + ")"
}

// Ran is how long the test ran against its plan: "12.3s of the planned
// 30s", "12.3s of at most 10m0s", "12.3s".
func (i *Interruption) Ran() string {
	ran := time.Duration(i.RanS * float64(time.Second)).Round(100 * time.Millisecond).String()
	switch {
	case i.PlannedS == nil:
		return ran + " (its planned length is not known)"
	case i.PlannedAtMost:
		return fmt.Sprintf("%s of at most %s planned", ran, time.Duration(*i.PlannedS*float64(time.Second)).Round(time.Second))
	}
	return fmt.Sprintf("%s of the planned %s", ran, time.Duration(*i.PlannedS*float64(time.Second)).Round(time.Second))
}

// Describe is the interruption in one line, for the reports' headline.
func (i *Interruption) Describe() string {
	calls := "no call was in flight"
	switch i.Canceled {
	case 0:
	case 1:
		calls = "1 call in flight was cancelled (counted as failed, error type canceled, in no latency figure)"
	default:
		calls = fmt.Sprintf("%d calls in flight were cancelled (counted as failed, error type canceled, in no latency figure)", i.Canceled)
	}
	return fmt.Sprintf("interrupted: stopped by %s at %s, after %s; %s", i.Why(), i.At.UTC().Format(time.RFC3339), i.Ran(), calls)
}

// InterruptionDifference is a comparison's line when either run was
// interrupted ("" when neither was): figures of a run cut short cover only
// the part that ran, and its load may not have reached the baseline's.
func InterruptionDifference(cur, base *Interruption) string {
	switch {
	case cur != nil && base != nil:
		return fmt.Sprintf("both runs were interrupted: this one by %s after %s, the baseline by %s after %s", cur.Why(), cur.Ran(), base.Why(), base.Ran())
	case cur != nil:
		return fmt.Sprintf("this run was interrupted (by %s after %s), the baseline ran to its end", cur.Why(), cur.Ran())
	case base != nil:
		return fmt.Sprintf("the baseline was interrupted (by %s after %s), this run ran to its end", base.Why(), base.Ran())
	}
	return ""
}
