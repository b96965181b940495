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
