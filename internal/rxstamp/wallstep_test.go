package rxstamp

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/asplanned"
)

// Kernel receive stamps are on the wall clock (CLOCK_REALTIME), and a test
// checks them against time.Now() taken around the write: a step of the wall
// clock while it measures (NTP setting the clock) moves the stamps against
// the test's own times by the step, and a sound stamp then looks as if it
// came before its bytes were written. Such a measurement says nothing of the
// stamps; it is detected and taken again, never judged with a wider bound.

// stepTolerance is how far the wall and the monotonic elapsed times of one
// measurement may differ without a step: the monotonic clock is slewed as the
// wall clock is and never stepped, so they differ only by a step and by the
// instant between the two readings time.Now takes.
const stepTolerance = 10 * time.Microsecond

// stepAttempts bounds how often a measurement is taken again: a clock that
// steps during each of them fails the test rather than hiding a fault.
const stepAttempts = 3

// wallStep is how far the wall clock was stepped since from: the wall
// clock's elapsed time less the monotonic clock's.
func wallStep(from time.Time) time.Duration {
	now := time.Now()
	return now.Round(0).Sub(from.Round(0)) - now.Sub(from)
}

// measureWithoutWallStep runs measure, which returns what it found wrong ("":
// nothing), and takes it again when the wall clock was stepped while it ran,
// whatever it found. It fails the test with the finding of a measurement no
// step touched, or when every attempt saw a step.
func measureWithoutWallStep(t *testing.T, measure func() (failure string)) {
	t.Helper()
	retryAcrossSteps(t, wallStep, measure)
}

// measureAsPlanned runs measure, which sets its scenario up and returns how
// its own actors strayed from the plan and what it found wrong, and takes it
// again (at most asplanned.Attempts times) when they strayed or the wall
// clock was stepped while it ran, whatever it found.
func measureAsPlanned(t *testing.T, measure func() (offPlan, failure string)) {
	t.Helper()
	asplanned.Retry(t, asplanned.Attempts, func() (string, string) {
		from := time.Now()
		offPlan, failure := measure()
		if step := wallStep(from); step.Abs() > stepTolerance {
			offPlan = strings.TrimPrefix(offPlan+fmt.Sprintf("; the wall clock was stepped %s", step), "; ")
		}
		return offPlan, failure
	})
}

// judge is the part of testing.T retryAcrossSteps uses.
type judge interface {
	Helper()
	Logf(format string, args ...any)
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

func retryAcrossSteps(t judge, stepSince func(time.Time) time.Duration, measure func() string) {
	t.Helper()
	for attempt := 1; attempt <= stepAttempts; attempt++ {
		from := time.Now()
		failure := measure()
		if step := stepSince(from); step.Abs() > stepTolerance {
			t.Logf("attempt %d: the wall clock was stepped %s during the measurement (finding: %q); measuring again", attempt, step, failure)
			continue
		}
		if failure != "" {
			t.Fatal(failure)
		}
		return
	}
	t.Fatalf("the wall clock was stepped during each of %d measurements: the receive stamps cannot be checked against it", stepAttempts)
}

// The detector sees no step where there was none, across a sleep that lets
// the slewing of both clocks show if it could.
func TestWallStepIsZeroWithoutAStep(t *testing.T) {
	from := time.Now()
	time.Sleep(20 * time.Millisecond)
	if step := wallStep(from); step.Abs() > stepTolerance {
		t.Logf("wall clock stepped %s during the test (or the two readings were far apart)", step)
		from = time.Now()
		time.Sleep(20 * time.Millisecond)
		if step = wallStep(from); step.Abs() > stepTolerance {
			t.Fatalf("wall step %s twice in a row: the detector sees steps that are not there", step)
		}
	}
}

// fakeJudge records what retryAcrossSteps decided.
type fakeJudge struct {
	failed string
	logs   int
}

func (*fakeJudge) Helper()                     {}
func (j *fakeJudge) Logf(string, ...any)       { j.logs++ }
func (j *fakeJudge) Fatal(args ...any)         { j.failed = fmt.Sprint(args...) }
func (j *fakeJudge) Fatalf(f string, a ...any) { j.failed = fmt.Sprintf(f, a...) }

// A measurement across a step is taken again and its finding dropped; the
// finding of one no step touched is the verdict; steps every time fail.
func TestRetryAcrossStepsRetriesOnlyAcrossSteps(t *testing.T) {
	for _, c := range []struct {
		name     string
		steps    []time.Duration // per attempt
		findings []string
		runs     int
		failed   string
	}{
		{"no step, sound", []time.Duration{0}, []string{""}, 1, ""},
		{"no step, a finding", []time.Duration{0}, []string{"early"}, 1, "early"},
		{"a step, then sound", []time.Duration{-465 * time.Microsecond, 0}, []string{"early", ""}, 2, ""},
		{"a step, then a finding", []time.Duration{time.Millisecond, 0}, []string{"", "early"}, 2, "early"},
		{"steps every time", []time.Duration{time.Millisecond, time.Millisecond, -time.Millisecond}, []string{"", "", ""}, stepAttempts, "stepped during each"},
	} {
		j, runs := &fakeJudge{}, 0
		retryAcrossSteps(j, func(time.Time) time.Duration { return c.steps[runs-1] }, func() string {
			runs++
			return c.findings[runs-1]
		})
		if runs != c.runs || !strings.Contains(j.failed, c.failed) || (c.failed == "") != (j.failed == "") {
			t.Fatalf("%s: %d runs, failed %q; want %d runs, failed with %q", c.name, runs, j.failed, c.runs, c.failed)
		}
	}
}
