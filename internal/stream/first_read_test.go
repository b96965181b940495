package stream

import (
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A first gap of zero is a late read when the server sent the rest apart and
// nothing says it sent those two together: a window (how long before their
// time the read's bytes may have come) under half the decode step does.
func TestFirstReadIsJudgedByTheOtherGapsAndTheWindow(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	for _, c := range []struct {
		name   string
		gaps   Gaps
		window time.Duration
		known  bool
		want   FirstRead
	}{
		{"read with the next token, the rest one by one", GapsOf(0, 20*ms, 20*ms, 20*ms), 0, false, FirstReadLate},
		{"read on its own", GapsOf(20*ms, 20*ms, 0, 20*ms), 0, false, FirstReadOnTime},
		{"sent with the next: both came within 2 ms", GapsOf(0, 20*ms, 20*ms, 20*ms), 2 * ms, true, FirstReadOnTime},
		{"both came within 9 ms, steps of 20", GapsOf(0, 20*ms, 21*ms, 19*ms), 9 * ms, true, FirstReadOnTime},
		{"the watcher looked late: 25 ms open", GapsOf(0, 20*ms, 20*ms, 20*ms), 25 * ms, true, FirstReadLate},
		{"half a step open", GapsOf(0, 20*ms, 20*ms, 20*ms), 10 * ms, true, FirstReadLate},
		{"a server that sends in bursts", GapsOf(0, 0, 0, 20*ms, 0), 0, true, FirstReadUnjudged},
		{"too few gaps to tell", GapsOf(0, 20*ms), 0, true, FirstReadUnjudged},
		{"no gaps", nil, 0, false, FirstReadUnjudged},
	} {
		require.Equal(t, c.want, c.gaps.judgeFirstRead(c.window, c.known), c.name)
	}
	late, known := FirstReadLate.Late()
	require.Equal(t, [2]bool{true, true}, [2]bool{late, known})
	late, known = FirstReadOnTime.Late()
	require.Equal(t, [2]bool{false, true}, [2]bool{late, known})
	_, known = FirstReadUnjudged.Late()
	require.False(t, known)
}

// chunkedBody hands a stream to the reader in the reads given, pausing
// between them: the first read holds what a late reader finds waiting.
type chunkedBody struct {
	reads []string
	pause time.Duration
}

func (b *chunkedBody) Read(p []byte) (int, error) {
	if len(b.reads) == 0 {
		return 0, io.EOF
	}
	if len(b.reads[0]) > len(p) {
		panic("test read larger than the reader's buffer")
	}
	n := copy(p, b.reads[0])
	b.reads = b.reads[1:]
	if len(b.reads) > 0 {
		time.Sleep(b.pause)
	}
	return n, nil
}

// windowHolder is a held clock whose reads all came within window.
type windowHolder struct{ window time.Duration }

func (windowHolder) Arrival(now time.Time) time.Time { return now }
func (windowHolder) Hold()                           {}
func (windowHolder) Release()                        {}
func (h windowHolder) Window() (time.Duration, bool) { return h.window, true }

// A first token read with the next is on time when the read's window shows
// that both came together; on HTTP/2 the window is the connection's latest
// read, maybe not the one that brought them, and is not used.
func TestAReadsWindowClearsAFirstTokenReadWithTheNext(t *testing.T) {
	t.Parallel()
	tok := func(i int) string {
		return fmt.Sprintf("data: {\"choices\":[{\"delta\":{\"content\":\"t%d \"}}]}\n\n", i)
	}
	finish := "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	for _, c := range []struct {
		name   string
		proto  int
		window time.Duration
		want   FirstRead
	}{
		{"HTTP/1.1, both came within 1 ms", 1, time.Millisecond, FirstReadOnTime},
		{"HTTP/1.1, both came within 30 ms", 1, 30 * time.Millisecond, FirstReadLate},
		{"HTTP/2, the connection's latest read came within 1 ms", 2, time.Millisecond, FirstReadLate},
	} {
		call := openAICall(t)
		call.SetArrivalClock(windowHolder{c.window})
		call.Begin(time.Now())
		call.Respond(&http.Response{StatusCode: 200, ProtoMajor: c.proto, Header: http.Header{"Content-Type": {"text/event-stream"}}}, time.Now())
		require.NoError(t, call.Read(&chunkedBody{reads: []string{tok(0) + tok(1), tok(2), tok(3) + finish}, pause: 20 * time.Millisecond}))
		r := call.Finish()
		require.True(t, r.OK, "%s: %v", c.name, r.Err)
		require.Equal(t, c.want, r.FirstRead, "%s: gaps %v", c.name, r.Gaps.Durations())
	}
}

// Events framed from one read share its time: a first token found waiting
// with the second has a first gap of zero, and the call says so.
func TestFirstTokenReadWithTheNextIsLate(t *testing.T) {
	t.Parallel()
	tok := func(i int) string {
		return fmt.Sprintf("data: {\"choices\":[{\"delta\":{\"content\":\"t%d \"}}]}\n\n", i)
	}
	finish := "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	for _, c := range []struct {
		name  string
		reads []string
		late  bool
	}{
		{"on time", []string{tok(0), tok(1), tok(2), tok(3) + finish}, false},
		{"late for the first token", []string{tok(0) + tok(1), tok(2), tok(3) + finish}, true},
	} {
		call := openAICall(t)
		call.Begin(time.Now())
		call.Respond(&http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}}, time.Now())
		require.NoError(t, call.Read(&chunkedBody{reads: c.reads, pause: 5 * time.Millisecond}))
		r := call.Finish()
		require.True(t, r.OK, "%s: %v", c.name, r.Err)
		late, known := r.FirstRead.Late()
		require.True(t, known, "%s: gaps %v", c.name, r.Gaps)
		require.Equal(t, c.late, late, "%s: gaps %v", c.name, r.Gaps)
		require.Equal(t, c.late, r.Gaps.At(0) == 0, "%s: the first gap is zero when, and only when, it was read with the next", c.name)
	}
}
