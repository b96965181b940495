// Package asplanned lets a timed test tell a wrong result from a scenario
// that did not happen. A test that sleeps to set a scenario up (a server
// pausing between tokens, a reader coming late) relies on the sleeps lasting
// about what it asked for; on a loaded machine a goroutine wakes late, two
// segments meant to be apart go out together, and what the test then
// measures says nothing of the code. Such an attempt is taken again, a
// bounded number of times, and never judged with a wider bound: a test whose
// scenario never ran as planned fails and says so.
package asplanned

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// Attempts is how often a measurement is taken before a scenario that never
// ran as planned fails the test: enough for a loaded machine's bad moments,
// few enough that a machine too busy to set the scenario up is reported.
const Attempts = 5

// Judge is the part of testing.T Retry uses.
type Judge interface {
	Helper()
	Logf(format string, args ...any)
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// Retry runs measure up to attempts times. measure sets its scenario up,
// measures, and returns offPlan (how its own actors strayed from the plan,
// "" when they did not) and failure (what it found wrong, "" nothing). An
// attempt off plan is taken again, whatever it found; the finding of the
// first attempt that ran as planned is the verdict. When none did, the test
// fails saying so.
func Retry(t Judge, attempts int, measure func() (offPlan, failure string)) {
	t.Helper()
	var last string
	for attempt := 1; attempt <= attempts; attempt++ {
		offPlan, failure := measure()
		if offPlan != "" {
			t.Logf("attempt %d did not run as planned (%s; finding: %q); measuring again", attempt, offPlan, failure)
			last = offPlan
			continue
		}
		if failure != "" {
			t.Fatal(failure)
		}
		return
	}
	t.Fatalf("the scenario did not run as planned in any of %d attempts (the machine is too busy to set it up; last: %s): nothing was measured", attempts, last)
}

// Plan notes how a test's actors strayed from what it planned for them;
// they may run on several goroutines (a server's handler, the reader).
type Plan struct {
	mu  sync.Mutex
	off []string
}

// Sleep sleeps for d and notes it off plan when it lasted more than d+slack:
// the moment the scenario needed has passed.
func (p *Plan) Sleep(what string, d, slack time.Duration) {
	from := time.Now()
	time.Sleep(d)
	if took := time.Since(from); took > d+slack {
		p.Offf("%s: a sleep of %s took %s", what, d, took)
	}
}

// Within notes what off plan when took is outside [lo, hi].
func (p *Plan) Within(what string, took, lo, hi time.Duration) {
	if took < lo || took > hi {
		p.Offf("%s took %s, planned within [%s, %s]", what, took, lo, hi)
	}
}

// Offf notes a stray the test found otherwise.
func (p *Plan) Offf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.off = append(p.off, fmt.Sprintf(format, args...))
}

// Strays is what strayed, "" when everything ran as planned.
func (p *Plan) Strays() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.off, "; ")
}
