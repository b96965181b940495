package asplanned

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// fakeJudge records what Retry decided.
type fakeJudge struct{ failed string }

func (*fakeJudge) Helper()                     {}
func (*fakeJudge) Logf(string, ...any)         {}
func (j *fakeJudge) Fatal(args ...any)         { j.failed = fmt.Sprint(args...) }
func (j *fakeJudge) Fatalf(f string, a ...any) { j.failed = fmt.Sprintf(f, a...) }

// An attempt off plan is taken again and its finding dropped; the finding of
// one that ran as planned is the verdict; off plan every time fails.
func TestRetryRetriesOnlyAttemptsOffPlan(t *testing.T) {
	for _, c := range []struct {
		name     string
		off      []string // per attempt
		findings []string
		runs     int
		failed   string
	}{
		{"as planned, sound", []string{""}, []string{""}, 1, ""},
		{"as planned, a finding", []string{""}, []string{"late"}, 1, "late"},
		{"overslept, then sound", []string{"overslept", ""}, []string{"late", ""}, 2, ""},
		{"overslept, then a finding", []string{"overslept", ""}, []string{"", "late"}, 2, "late"},
		{"overslept every time", []string{"a", "b", "c"}, []string{"", "", ""}, 3, "did not run as planned in any of 3 attempts (the machine is too busy to set it up; last: c)"},
	} {
		j, runs := &fakeJudge{}, 0
		Retry(j, 3, func() (string, string) {
			runs++
			return c.off[runs-1], c.findings[runs-1]
		})
		if runs != c.runs || !strings.Contains(j.failed, c.failed) || (c.failed == "") != (j.failed == "") {
			t.Fatalf("%s: %d runs, failed %q; want %d runs, failed with %q", c.name, runs, j.failed, c.runs, c.failed)
		}
	}
}

// A sleep that overran its slack is noted, one within it is not, and the
// notes of several actors are kept.
func TestPlanNotesStrays(t *testing.T) {
	var p Plan
	p.Sleep("short", time.Millisecond, time.Hour)
	if s := p.Strays(); s != "" {
		t.Fatalf("a sleep within its slack noted: %q", s)
	}
	p.Sleep("the pause", 2*time.Millisecond, -time.Millisecond) // always overruns
	p.Within("the write", 3*time.Millisecond, 0, 2*time.Millisecond)
	p.Within("the read", time.Millisecond, 0, 2*time.Millisecond)
	if s := p.Strays(); !strings.Contains(s, "the pause: a sleep of 2ms took") || !strings.Contains(s, "the write took 3ms, planned within [0s, 2ms]") || strings.Contains(s, "the read") {
		t.Fatalf("strays %q", s)
	}
}
