package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// Three stacks as `go tool pprof -traces` prints them: a read in net/http's
// read loop (k6/http's and the module's alike), the arrival clock's watcher
// peeking, and a sample of the module's call plan on the event loop.
const tracesFixture = `File: k6
Type: cpu
-----------+-------------------------------------------------------
     1.20s   internal/runtime/syscall/linux.Syscall6
             syscall.read
             net.(*conn).Read
             go.k6.io/k6/lib/netext.(*Conn).Read
             net/http.(*persistConn).readLoop
-----------+-------------------------------------------------------
      30ms   internal/runtime/syscall/linux.Syscall6
             github.com/llmstream/xk6-llmstream/internal/rxstamp.(*watcher).peek
             github.com/llmstream/xk6-llmstream/internal/rxstamp.(*watcher).run
-----------+-------------------------------------------------------
      20ms   github.com/llmstream/xk6-llmstream/binding/calls.(*Client).request
             github.com/llmstream/xk6-llmstream/binding/calls.(*Client).Chat
             github.com/grafana/sobek.(*vm).run
`

func categoryOf(t *testing.T, name string) int {
	t.Helper()
	for i, c := range categories {
		if strings.HasPrefix(c.name, name) {
			return i
		}
	}
	t.Fatalf("no category %q", name)
	return -1
}

func TestSplitTracesClaimsEachStackOnce(t *testing.T) {
	sp, err := splitTraces([]byte(tracesFixture))
	if err != nil {
		t.Fatal(err)
	}
	if sp.all != 1250*time.Millisecond {
		t.Fatalf("all = %s, want 1.25s", sp.all)
	}
	for name, want := range map[string]time.Duration{
		"socket reads":                   1200 * time.Millisecond,
		"ours: arrival clock's watcher":  30 * time.Millisecond,
		"ours: chat() on the event loop": 20 * time.Millisecond,
	} {
		if got := sp.totals[categoryOf(t, name)]; got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
}

func TestPerCallIsCPUOverTheProfiledCalls(t *testing.T) {
	a, err := splitTraces([]byte(tracesFixture))
	if err != nil {
		t.Fatal(err)
	}
	b := a
	a.client, a.callsPerSec, a.seconds = "k6-event", 1000, 10 // 10 000 calls: 1.25 s is 125 µs each
	b.client, b.callsPerSec, b.seconds = "k6-http", 2000, 10  // 20 000 calls: 62.5 µs each
	var out bytes.Buffer
	if err := printPerCall(&out, []split{a, b}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"125.0", "62.5", "+62.5", "k6-event − k6-http"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
	a.callsPerSec = 0
	if err := printPerCall(&out, []split{a, b}); err == nil {
		t.Error("a run without calls printed per-call figures")
	}
}

func TestSplitTracesRefusesAnEmptyProfile(t *testing.T) {
	if _, err := splitTraces([]byte("File: k6\n")); err == nil {
		t.Error("an empty profile split")
	}
}

// Profiles of one client taken in turns add up to CPU over all the calls
// made while any of them ran, not to a mean of their per-call figures: a
// profile of a slow minute (fewer calls) weighs by its calls.
func TestProfilesOfOneClientAddUp(t *testing.T) {
	one, err := splitTraces([]byte(tracesFixture))
	if err != nil {
		t.Fatal(err)
	}
	one.client, one.seconds = "k6-event", 10
	fast, slow := one, one
	fast.callsPerSec, slow.callsPerSec = 1500, 500 // 15 000 and 5 000 calls over the same CPU
	var sum split
	sum.add(fast)
	sum.add(slow)
	if sum.seconds != 20 || sum.callsPerSec != 1000 || sum.all != 2*one.all {
		t.Fatalf("added up to %d s at %.0f calls/s with %s of CPU", sum.seconds, sum.callsPerSec, sum.all)
	}
	var http split
	one.client, one.callsPerSec = "k6-http", 2000
	http.add(one)
	http.add(one)
	var out bytes.Buffer
	if err := printPerCall(&out, []split{sum, http}); err != nil {
		t.Fatal(err)
	}
	// 2 × 1.25 s over 20 000 calls; the profiles alone: 83 and 250;
	// k6-http's 62.5 in each.
	for _, want := range []string{"125.0", "83–250", "62–62", "+62.5", "total of each of the 2 profiles"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
}
