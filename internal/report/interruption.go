package report

import (
	"strings"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// ScenarioPlan is how long one k6 scenario was planned to run: from its
// start time, for its length (graceful stops and ramp-downs left out, as
// they only let calls in flight end). AtMost: the length is a bound only
// (an iterations executor ends when its iterations are done, at the latest
// after its maxDuration).
type ScenarioPlan struct {
	Start, Length time.Duration
	AtMost        bool
}

// PlannedLength is the test's planned length: when the scenario that ends
// last ends. atMost when that end is a bound; ok is false without plans.
func PlannedLength(plans []ScenarioPlan) (length time.Duration, atMost, ok bool) {
	for _, p := range plans {
		end := p.Start + p.Length
		switch {
		case !ok || end > length:
			length, atMost, ok = end, p.AtMost, true
		case end == length:
			atMost = atMost && p.AtMost
		}
	}
	return length, atMost, ok
}

// Stop is what the binding saw of a test that k6 stopped before its
// planned end, for the record's Interruption.
type Stop struct {
	At    time.Time // the first sign of the stop (the signal, test.abort(), k6's end of the test)
	Start time.Time // when the test started
	// Signal is "SIGINT" or "SIGTERM" when one came; Aborted says the
	// script called test.abort() (AbortMessage its reason); Thresholds
	// are the thresholds with abortOnFail that failed ("metric: source").
	Signal       string
	Aborted      bool
	AbortMessage string
	Thresholds   []string
	Plans        []ScenarioPlan
}

// Interruption is the stop as the record keeps it. A signal is named first
// (k6 stops for it whatever else happened), then test.abort(), then a
// failed threshold with abortOnFail; without any of them k6 stopped the test
// for a reason it does not tell an extension.
func (s Stop) Interruption() *runrecord.Interruption {
	i := &runrecord.Interruption{At: s.At, By: runrecord.StoppedByK6}
	switch {
	case s.Signal != "":
		i.By, i.Detail = runrecord.StoppedBySignal, s.Signal
	case s.Aborted:
		i.By, i.Detail = runrecord.StoppedByAbort, s.AbortMessage
	case len(s.Thresholds) > 0:
		i.By, i.Detail = runrecord.StoppedByThreshold, strings.Join(s.Thresholds, "; ")
	}
	if !s.Start.IsZero() && s.At.After(s.Start) {
		i.RanS = s.At.Sub(s.Start).Seconds()
	}
	if length, atMost, ok := PlannedLength(s.Plans); ok {
		planned := length.Seconds()
		i.PlannedS, i.PlannedAtMost = &planned, atMost
	}
	return i
}
