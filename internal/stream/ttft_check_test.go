package stream

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/asplanned"
	"github.com/llmstream/xk6-llmstream/internal/measure"
)

// A first gap of zero is a late read when the server sent the rest apart and
// nothing says it sent those two together: a window (how long before their
// time the read's bytes may have come) under half the decode step does. A
// request that began to go out half a decode step or more after t0 (and at
// least minSendLate) was sent late.
func TestTTFTIsJudgedByTheGapsTheWindowAndTheSendWait(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	none := measure.Duration{} // no request written
	steps := GapsOf(20*ms, 20*ms, 20*ms, 20*ms)
	zeroFirst := GapsOf(0, 20*ms, 20*ms, 20*ms)
	for _, c := range []struct {
		name     string
		gaps     Gaps
		window   time.Duration
		known    bool
		sendWait measure.Duration
		want     TTFTCheck
	}{
		{"read with the next token, the rest one by one", zeroFirst, 0, false, none, TTFTReadLate},
		{"read on its own", GapsOf(20*ms, 20*ms, 0, 20*ms), 0, false, none, TTFTOnTime},
		{"sent with the next: both came within 2 ms", zeroFirst, 2 * ms, true, none, TTFTOnTime},
		{"both came within 9 ms, steps of 20", GapsOf(0, 20*ms, 21*ms, 19*ms), 9 * ms, true, none, TTFTOnTime},
		{"the watcher looked late: 25 ms open", zeroFirst, 25 * ms, true, none, TTFTReadLate},
		{"half a step open", zeroFirst, 10 * ms, true, none, TTFTReadLate},
		{"the request went out at once", steps, 0, false, measure.Of(100 * time.Microsecond), TTFTOnTime},
		{"the request went out 9 ms late, steps of 20", steps, 0, false, measure.Of(9 * ms), TTFTOnTime},
		{"the request went out half a step late", steps, 0, false, measure.Of(10 * ms), TTFTSentLate},
		{"a late read says more than a late send", zeroFirst, 0, false, measure.Of(30 * ms), TTFTReadLate},
		{"steps of 100 µs: a send wait under 1 ms is on time", GapsOf(100*time.Microsecond, 100*time.Microsecond, 100*time.Microsecond), 0, false, measure.Of(900 * time.Microsecond), TTFTOnTime},
		{"steps of 100 µs: 1 ms is late", GapsOf(100*time.Microsecond, 100*time.Microsecond, 100*time.Microsecond), 0, false, measure.Of(ms), TTFTSentLate},
		{"a server that sends in bursts", GapsOf(0, 0, 0, 20*ms, 0), 0, true, measure.Of(30 * ms), TTFTUnjudged},
		{"too few gaps to tell", GapsOf(0, 20*ms), 0, true, measure.Of(30 * ms), TTFTUnjudged},
		{"no gaps", nil, 0, false, none, TTFTUnjudged},
	} {
		require.Equal(t, c.want, c.gaps.checkTTFT(c.window, c.known, c.sendWait), c.name)
	}
	for check, want := range map[TTFTCheck][2]bool{
		TTFTReadLate: {true, true}, TTFTSentLate: {true, true}, TTFTOnTime: {false, true}, TTFTUnjudged: {false, false},
	} {
		late, known := check.Late()
		require.Equal(t, want, [2]bool{late, known}, check.String())
	}
}

// A call's send wait is from t0 to the request's first bytes going out, its
// connection's set-up left out, over HTTP/1.1 and HTTP/2 alike, on a new
// connection as on a reused one; before any request went out it is not known.
func TestSendWaitIsFromT0ToTheRequestGoingOut(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		proto int
		sent  time.Duration // after t0; 0: never
		wait  measure.Duration
		check TTFTCheck
		dial  time.Duration // the dial's own time, as the transport reports it; 0: not reported
	}{
		{"HTTP/1.1, sent at once", 1, 50 * time.Microsecond, measure.Of(50 * time.Microsecond), TTFTOnTime, 0},
		{"HTTP/1.1, sent 15 ms late, steps of 20", 1, 15 * time.Millisecond, measure.Of(15 * time.Millisecond), TTFTSentLate, 0},
		{"HTTP/2, sent 15 ms late", 2, 15 * time.Millisecond, measure.Of(15 * time.Millisecond), TTFTSentLate, 0},
		{"never sent", 1, 0, measure.Duration{}, TTFTOnTime, 0},
		// the connection's set-up (a few ms here) is left out of the wait,
		// and what is left is judged as on a reused connection
		{"HTTP/1.1, sent 40 ms late on a new connection", 1, 40 * time.Millisecond, measure.Of(40 * time.Millisecond), TTFTSentLate, 0},
		{"HTTP/1.1, sent 8 ms late on a new connection", 1, 8 * time.Millisecond, measure.Of(8 * time.Millisecond), TTFTOnTime, 0},
		// the dial took 1 ms of its connect: the rest was the dialing
		// goroutine's wait for a CPU, this process's
		{"HTTP/1.1, sent 12 ms late on a new connection, its dial 1 ms", 1, 12 * time.Millisecond, measure.Of(12 * time.Millisecond), TTFTSentLate, time.Millisecond},
	} {
		asplanned.Retry(t, asplanned.Attempts, func() (string, string) {
			var plan asplanned.Plan
			call := openAICall(t)
			t0 := time.Now()
			call.Begin(t0)
			if strings.Contains(c.name, "new connection") {
				wd := NewWatchdog(Timeouts{}, func(error) {})
				wd.ConnectStart()
				// a connect much over its few ms leaves too little
				// of a 40 ms send wait to be late
				plan.Sleep("the connect", 3*time.Millisecond, 20*time.Millisecond)
				wd.ConnectDone(false)
				call.SetWatchdog(wd)
				defer wd.Stop()
			}
			setUp := c.dial // the connect, unless the dial reported its own time
			if setUp > 0 {
				call.SetUp(setUp)
			}
			if c.sent > 0 {
				call.Sent(t0.Add(c.sent))
				call.Sent(t0.Add(time.Hour)) // a redirect's request: the first counts
			}
			// The verdict rests on the step the pauses make: the body's
			// clock leaves their oversleeping out.
			body := &chunkedBody{reads: []string{tokenEvent(0), tokenEvent(1), tokenEvent(2), tokenEvent(3) + finishEvents}, pause: 20 * time.Millisecond, plan: &plan}
			call.SetArrivalClock(body)
			r := readChunksOf(t, call, c.proto, body)
			require.True(t, r.OK, "%s: %v", c.name, r.Err)
			wait := c.wait
			if d, ok := wait.Get(); ok {
				if setUp == 0 {
					setUp = r.Connect // the set-up the call's watchdog measured
				}
				wait = measure.Of(max(d-setUp, 0))
			}
			require.Equal(t, wait, r.SendWait, c.name)
			if r.TTFTCheck != c.check {
				return plan.Strays(), fmt.Sprintf("%s: %v, want %v; gaps %v", c.name, r.TTFTCheck, c.check, r.Gaps.Durations())
			}
			return plan.Strays(), ""
		})
	}
}

// tokenEvent is the i-th token of an OpenAI chat stream; finishEvents end it.
func tokenEvent(i int) string {
	return fmt.Sprintf("data: {\"choices\":[{\"delta\":{\"content\":\"t%d \"}}]}\n\n", i)
}

const finishEvents = "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"

// readChunks gives call an SSE response over HTTP/proto whose body comes in
// the reads given, pause apart, and finishes it.
func readChunks(t *testing.T, call *Call, proto int, pause time.Duration, reads ...string) *Result {
	t.Helper()
	return readChunksOf(t, call, proto, &chunkedBody{reads: reads, pause: pause})
}

// readChunksOf is readChunks of a body the caller made (one that is also the
// call's clock).
func readChunksOf(t *testing.T, call *Call, proto int, body *chunkedBody) *Result {
	t.Helper()
	call.Respond(&http.Response{StatusCode: 200, ProtoMajor: proto, Header: http.Header{"Content-Type": {"text/event-stream"}}}, time.Now())
	require.NoError(t, call.Read(body))
	return call.Finish()
}

// chunkedBody hands a stream to the reader in the reads given, pausing
// between them: the first read holds what a late reader finds waiting.
//
// As the call's clock (Arrival) it runs as if every pause had lasted what was
// planned: real time less what its sleeps overslept. A test whose verdict
// rests on the decode step the pauses make is then not at the mercy of a
// loaded machine's oversleeping (a pause of 20 ms that took 50 makes a 15 ms
// send wait on time). What is left is the reader's own time between reads;
// given a plan, the body notes in it a reader that took more than a
// twentieth of a pause between two reads.
type chunkedBody struct {
	reads     []string
	pause     time.Duration
	overslept time.Duration   // by the pauses so far
	returned  time.Time       // when the latest read returned
	plan      *asplanned.Plan // nil: the reader's time is not noted
}

func (b *chunkedBody) Read(p []byte) (int, error) {
	if len(b.reads) == 0 {
		return 0, io.EOF
	}
	if len(b.reads[0]) > len(p) {
		panic("test read larger than the reader's buffer")
	}
	if took := time.Since(b.returned); b.plan != nil && !b.returned.IsZero() && took > b.pause/20 {
		b.plan.Offf("the reader took %s between two reads", took)
	}
	n := copy(p, b.reads[0])
	b.reads = b.reads[1:]
	if len(b.reads) > 0 {
		from := time.Now()
		time.Sleep(b.pause)
		b.overslept += time.Since(from) - b.pause
	}
	b.returned = time.Now()
	return n, nil
}

// Arrival is now as if every pause so far had lasted what was planned.
func (b *chunkedBody) Arrival(now time.Time) time.Time { return now.Add(-b.overslept) }

// windowHolder is a held clock whose reads all came within window; its
// arrivals are clock's, or now.
type windowHolder struct {
	window time.Duration
	clock  ArrivalClock
}

func (h windowHolder) Arrival(now time.Time) time.Time {
	if h.clock == nil {
		return now
	}
	return h.clock.Arrival(now)
}
func (windowHolder) Hold()                           {}
func (windowHolder) Release()                        {}
func (h windowHolder) Window() (time.Duration, bool) { return h.window, true }

// A first token read with the next is on time when the read's window shows
// that both came together; on HTTP/2 the window is the connection's latest
// read, maybe not the one that brought them, and is not used.
func TestAReadsWindowClearsAFirstTokenReadWithTheNext(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		proto  int
		window time.Duration
		want   TTFTCheck
	}{
		{"HTTP/1.1, both came within 1 ms", 1, time.Millisecond, TTFTOnTime},
		{"HTTP/1.1, both came within 30 ms", 1, 30 * time.Millisecond, TTFTReadLate},
		{"HTTP/2, the connection's latest read came within 1 ms", 2, time.Millisecond, TTFTReadLate},
	} {
		// The body's clock leaves the pauses' oversleeping out: one
		// overslept past twice the wide window would make even that
		// under half the step.
		asplanned.Retry(t, asplanned.Attempts, func() (string, string) {
			var plan asplanned.Plan
			call := openAICall(t)
			body := &chunkedBody{reads: []string{tokenEvent(0) + tokenEvent(1), tokenEvent(2), tokenEvent(3) + finishEvents}, pause: 20 * time.Millisecond, plan: &plan}
			call.SetArrivalClock(windowHolder{c.window, body})
			call.Begin(time.Now())
			r := readChunksOf(t, call, c.proto, body)
			require.True(t, r.OK, "%s: %v", c.name, r.Err)
			if r.TTFTCheck != c.want {
				return plan.Strays(), fmt.Sprintf("%s: %v, want %v; gaps %v", c.name, r.TTFTCheck, c.want, r.Gaps.Durations())
			}
			return plan.Strays(), ""
		})
	}
}

// Events framed from one read share its time: a first token found waiting
// with the second has a first gap of zero, and the call says so.
func TestFirstTokenReadWithTheNextIsLate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		reads []string
		late  bool
	}{
		{"on time", []string{tokenEvent(0), tokenEvent(1), tokenEvent(2), tokenEvent(3) + finishEvents}, false},
		{"late for the first token", []string{tokenEvent(0) + tokenEvent(1), tokenEvent(2), tokenEvent(3) + finishEvents}, true},
	} {
		call := openAICall(t)
		call.Begin(time.Now())
		r := readChunks(t, call, 1, 5*time.Millisecond, c.reads...)
		require.True(t, r.OK, "%s: %v", c.name, r.Err)
		late, known := r.TTFTCheck.Late()
		require.True(t, known, "%s: gaps %v", c.name, r.Gaps)
		require.Equal(t, c.late, late, "%s: gaps %v", c.name, r.Gaps)
		require.Equal(t, c.late, r.Gaps.At(0) == 0, "%s: the first gap is zero when, and only when, it was read with the next", c.name)
	}
}

// With n > 1 the call is judged too: by its first answer's gaps, each choice
// keeping its own series, so two answers sent in the same step do not make
// zero gaps of each other.
func TestTTFTIsJudgedWithSeveralAnswers(t *testing.T) {
	t.Parallel()
	step := func(i int) string {
		return fmt.Sprintf("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a%d \"}}]}\n\n", i) +
			fmt.Sprintf("data: {\"choices\":[{\"index\":1,\"delta\":{\"content\":\"b%d \"}}]}\n\n", i)
	}
	const finish = "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" +
		"data: {\"choices\":[{\"index\":1,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	for _, c := range []struct {
		name  string
		reads []string
		want  TTFTCheck
	}{
		{"every step read on its own", []string{step(0), step(1), step(2), step(3) + finish}, TTFTOnTime},
		{"the first step read with the second", []string{step(0) + step(1), step(2), step(3), step(4) + finish}, TTFTReadLate},
	} {
		call := openAICall(t)
		call.Begin(time.Now())
		r := readChunks(t, call, 1, 20*time.Millisecond, c.reads...)
		require.True(t, r.OK, "%s: %v", c.name, r.Err)
		require.Len(t, r.Choices, 2, c.name)
		require.Equal(t, c.want, r.TTFTCheck, "%s: gaps %v", c.name, r.Gaps.Durations())
	}
}
