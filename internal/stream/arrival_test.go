//go:build linux

package stream

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/asplanned"
	"github.com/llmstream/xk6-llmstream/internal/protocol"
	"github.com/llmstream/xk6-llmstream/internal/rxstamp"
)

// A reader that falls behind (here a callback that blocks the reading
// goroutine; under load, a CPU it waits for) dates the events that queued
// meanwhile by when their bytes arrived, once the connection gives receive
// stamps: the gap the server made is measured, not the reader's lateness.
func TestLateReaderKeepsTheServersGaps(t *testing.T) {
	const serverGap, readerLate = 20 * time.Millisecond, 250 * time.Millisecond
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\"t%d \"}}]}\n\n", i)
			w.(http.Flusher).Flush()
			time.Sleep(serverGap)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	transport, spec := stampingClient(t)

	measure := func() Gaps {
		first := true
		call := NewCall(Config{Spec: spec, OnEvent: func(RawEvent) {
			if first { // the reader is late for everything after the first event
				first = false
				time.Sleep(readerLate)
			}
		}}, time.Time{})
		var stamped bool
		// What the client does: the connection a request got gives the call its clock.
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
			GotConn: func(info httptrace.GotConnInfo) {
				if c, ok := info.Conn.(*rxstamp.Conn); ok {
					call.SetArrivalClock(c)
					stamped = true
				}
			},
		})
		r := readCall(ctx, t, transport, srv.URL, call)
		if !stamped {
			t.Fatal("no stamping connection")
		}
		return r.Gaps
	}
	// The first connection's packets may come unstamped while the kernel
	// turns stamping on; the connection is kept alive and reused after.
	var gaps Gaps
	for range 5 {
		if gaps = measure(); len(gaps) == 2 && gaps.At(0) < readerLate/2 {
			break
		}
	}
	if len(gaps) != 2 {
		t.Fatalf("%d gaps", len(gaps))
	}
	// Both later events waited for the reader; their stamps are their
	// arrivals (the second's read may carry the third's bytes too, and
	// then both have the newest packet's stamp: an upper bound, still far
	// below the reader's lateness).
	if g := gaps.At(0); g >= readerLate/2 {
		t.Fatalf("first gap %s: the reader's lateness (%s), not the server's gap (%s)", g, readerLate, serverGap)
	}
}

// staleClock dates every read an hour back: a stamp that belonged to other
// bytes (a connection's previous response).
type staleClock struct{}

func (staleClock) Arrival(now time.Time) time.Time { return now.Add(-time.Hour) }

// No arrival precedes the request, the headers or an earlier event,
// whatever the connection's stamps say: bytes cannot come before they were
// asked for.
func TestArrivalsNeverPrecedeTheRequest(t *testing.T) {
	spec, err := protocol.Lookup("openai-chat")
	if err != nil {
		t.Fatal(err)
	}
	c := NewCall(Config{Spec: spec}, time.Time{})
	c.SetArrivalClock(staleClock{})
	c.Begin(time.Now())
	c.Respond(&http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}}, time.Now())
	body := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"},\"finish_reason\":\"stop\"}]}\n\n" +
		"data: [DONE]\n\n"
	if err := c.Read(iotestOneByte(body)); err != nil {
		t.Fatal(err)
	}
	r := c.Finish()
	ttfb, ttft, e2e := r.TTFB.Or(0), r.TTFT.Or(0), r.E2E.Or(0)
	measured := r.TTFB.Known() && r.TTFT.Known() && r.E2E.Known()
	if !r.OK || !measured || ttft < ttfb || e2e < ttft || len(r.Gaps) != 1 || r.Gaps.At(0) < 0 {
		t.Fatalf("ok %v ttfb %v ttft %v e2e %v gaps %v", r.OK, r.TTFB, r.TTFT, r.E2E, r.Gaps.Durations())
	}
}

// iotestOneByte reads s a byte at a time, so every event has its own reads.
func iotestOneByte(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) }

// arrivalOnly is a connection's clock without its hold: what a reader had
// before the watcher.
type arrivalOnly struct{ c *rxstamp.Conn }

func (a arrivalOnly) Arrival(now time.Time) time.Time { return a.c.Arrival(now) }

// A reader that is busy when the first token comes, and gets to it only after
// the next ones came (here a callback on the role event blocks it; under
// load, a wave of calls ending and starting), still dates every token by its
// own packet: the held connection keeps the reads apart. Without the hold
// they come out of one read with the latest stamp: the TTFT is the third
// token's and the first gaps are zero.
func TestLateReaderKeepsItsFirstToken(t *testing.T) {
	// The reader is back after the third token, before the fourth:
	// midway, as far from each as a loaded machine may oversleep.
	const step, readerLate = 40 * time.Millisecond, 140 * time.Millisecond
	writes := make(chan serverWrites, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		sw := serverWrites{began: time.Now()}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n")
		w.(http.Flusher).Flush()
		for i := range 6 {
			time.Sleep(step)
			from := time.Now()
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\"t%d \"}}]}\n\n", i)
			w.(http.Flusher).Flush()
			sw.tokens = append(sw.tokens, [2]time.Time{from, time.Now()})
		}
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
		writes <- sw
	}))
	defer srv.Close()
	transport, spec := stampingClient(t)
	// The first connection's packets may come unstamped while the kernel
	// turns stamping on; the connection is reused after.
	for range 5 {
		r := readLate(t, transport, spec, srv.URL, true, readerLate)
		if <-writes; r.TTFT.Or(0) < readerLate {
			break
		}
	}
	for _, held := range []bool{true, false} {
		asplanned.Retry(t, asplanned.Attempts, func() (string, string) {
			start := time.Now()
			r, back := readLateBack(t, transport, spec, srv.URL, held, readerLate)
			offPlan := (<-writes).strays(start, back, step, 2)
			late, known := r.TTFTCheck.Late()
			t.Logf("held %v: TTFT %s, gaps %v, first read late %v (judged %v)", held, r.TTFT, r.Gaps.Durations(), late, known)
			if !r.OK || len(r.Gaps) != 5 || !known {
				return offPlan, fmt.Sprintf("held %v: ok %v, gaps %v, first read late %v (judged %v)", held, r.OK, r.Gaps.Durations(), late, known)
			}
			if !held {
				if r.TTFT.Or(0) < 2*step+step/2 || !late {
					return offPlan, fmt.Sprintf("not held: TTFT %s, want the third token's (%s); first read late %v", r.TTFT, 3*step, late)
				}
				return offPlan, ""
			}
			if !r.TTFT.Known() || r.TTFT.Or(0) >= step+step/2 || late {
				return offPlan, fmt.Sprintf("held: TTFT %s, the first token came after %s; first read late %v", r.TTFT, step, late)
			}
			for _, g := range r.Gaps.Durations() {
				if g < step/2 || g > step+step/2 {
					return offPlan, fmt.Sprintf("held: gaps %v, the server's were %s", r.Gaps.Durations(), step)
				}
			}
			return offPlan, ""
		})
	}
}

// serverWrites is when a test server's handler began and wrote each token:
// from just before the write to just after its flush, so the token's packet
// arrived within each span.
type serverWrites struct {
	began  time.Time
	tokens [][2]time.Time
}

// strays is how the server and a reader back from its lateness at back
// strayed from the plan the verdicts rest on, for a request that began at
// start: the handler began within half a step (a later request may have gone
// out as late, and a send wait of half the step is late); the first token's
// packet came within a step and a half (the held TTFT's bound); each next one
// within a step and a half of the one before (the held gaps' bound); and the
// reader was back after token lastBefore was written and before the next
// (else the unheld read merges other tokens than the scenario's; a
// negative lastBefore: the reader was not held back).
func (sw serverWrites) strays(start, back time.Time, step time.Duration, lastBefore int) string {
	var plan asplanned.Plan
	plan.Within("the handler's start after the request", sw.began.Sub(start), 0, step/2)
	plan.Within("the first token's write after the request", sw.tokens[0][1].Sub(start), 0, step+step/2)
	for i := 1; i < len(sw.tokens); i++ {
		plan.Within(fmt.Sprintf("token %d's write after the one before", i), sw.tokens[i][1].Sub(sw.tokens[i-1][0]), 0, step+step/2)
	}
	if lastBefore >= 0 && (!sw.tokens[lastBefore][1].Before(back) || !back.Before(sw.tokens[lastBefore+1][0])) {
		plan.Offf("the reader was back %s after the request, not between token %d's write (%s) and the next's (%s)",
			back.Sub(start), lastBefore, sw.tokens[lastBefore][1].Sub(start), sw.tokens[lastBefore+1][0].Sub(start))
	}
	return plan.Strays()
}

// readLate reads an answer whose reader is busy for readerLate after the
// first event (the role event of these tests' servers), on a connection held
// as the module holds it or only giving its clock.
func readLate(t *testing.T, transport *http.Transport, spec *protocol.Spec, url string, held bool, readerLate time.Duration) *Result {
	t.Helper()
	r, _ := readLateBack(t, transport, spec, url, held, readerLate)
	return r
}

// readLateBack is readLate, and when the reader was back from its lateness.
func readLateBack(t *testing.T, transport *http.Transport, spec *protocol.Spec, url string, held bool, readerLate time.Duration) (*Result, time.Time) {
	t.Helper()
	first := true
	var back time.Time
	call := NewCall(Config{Spec: spec, OnEvent: func(RawEvent) {
		if first { // the role event: the reader is busy while the first tokens come
			first = false
			time.Sleep(readerLate)
			back = time.Now()
		}
	}}, time.Time{})
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			c, ok := info.Conn.(*rxstamp.Conn)
			switch {
			case !ok:
				t.Error("no stamping connection")
			case held:
				call.SetArrivalClock(c)
			default:
				call.SetArrivalClock(arrivalOnly{c})
			}
		},
	})
	return readCall(ctx, t, transport, url, call), back
}

// A server that sends its first two tokens together (one starved of CPU
// does) gives a first gap of zero too, but the call is not late: on a held
// connection the read that carried them shows that both came within a
// millisecond or so, whether the reader got to them late or at once. Without
// the hold nothing shows it, and the read counts as late.
func TestAServersBurstIsNotALateRead(t *testing.T) {
	const step = 40 * time.Millisecond
	tok := func(i int) string {
		return fmt.Sprintf("data: {\"choices\":[{\"delta\":{\"content\":\"t%d \"}}]}\n\n", i)
	}
	writes := make(chan serverWrites, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		sw := serverWrites{began: time.Now()}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n")
		w.(http.Flusher).Flush()
		write := func(s string) {
			from := time.Now()
			fmt.Fprint(w, s)
			w.(http.Flusher).Flush()
			sw.tokens = append(sw.tokens, [2]time.Time{from, time.Now()})
		}
		time.Sleep(step)
		write(tok(0) + tok(1)) // the first two together
		for i := 2; i < 6; i++ {
			time.Sleep(step)
			write(tok(i))
		}
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
		writes <- sw
	}))
	defer srv.Close()
	transport, spec := stampingClient(t)
	readLate(t, transport, spec, srv.URL, false, 0) // stamping on, a connection to reuse
	<-writes
	for _, c := range []struct {
		name       string
		held       bool
		readerLate time.Duration
		want       TTFTCheck
	}{
		{"held, the reader late for both", true, step + step/2, TTFTOnTime},
		{"held, the reader on time", true, 0, TTFTOnTime},
		{"not held", false, step + step/2, TTFTReadLate},
	} {
		asplanned.Retry(t, asplanned.Attempts, func() (string, string) {
			start := time.Now()
			r, back := readLateBack(t, transport, spec, srv.URL, c.held, c.readerLate)
			lastBefore := 0 // a late reader is back between the burst and the next token
			if c.readerLate == 0 {
				lastBefore = -1
			}
			offPlan := (<-writes).strays(start, back, step, lastBefore)
			t.Logf("%s: TTFT %s, gaps %v, %v", c.name, r.TTFT, r.Gaps.Durations(), r.TTFTCheck)
			if !r.OK || len(r.Gaps) != 5 || r.Gaps[0] != 0 {
				return offPlan, fmt.Sprintf("%s: ok %v, gaps %v: the first two tokens came together", c.name, r.OK, r.Gaps.Durations())
			}
			if ttft := r.TTFT.Or(0); ttft < step/2 || ttft > step+step/2 {
				return offPlan, fmt.Sprintf("%s: TTFT %s, the first tokens came after %s", c.name, r.TTFT, step)
			}
			if r.TTFTCheck != c.want {
				return offPlan, fmt.Sprintf("%s: %v, want %v", c.name, r.TTFTCheck, c.want)
			}
			return offPlan, ""
		})
	}
}

// stampingClient is a transport whose connections keep receive stamps, as
// k6's dialer's do for the module, and the protocol the tests' servers speak.
func stampingClient(t testing.TB) (*http.Transport, *protocol.Spec) {
	t.Helper()
	transport := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return rxstamp.Wrap(c), nil
	}}
	t.Cleanup(transport.CloseIdleConnections)
	spec, err := protocol.Lookup("openai-chat")
	if err != nil {
		t.Fatal(err)
	}
	return transport, spec
}

// readCall posts to url and reads the answer into call, as the module does.
func readCall(ctx context.Context, t *testing.T, transport *http.Transport, url string, call *Call) *Result {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	call.Begin(time.Now())
	resp, err := transport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	call.Respond(resp, time.Now())
	if err := call.Read(resp.Body); err != nil {
		t.Fatal(err)
	}
	return call.Finish()
}
