package stream

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/tmaxmax/go-sse"

	"github.com/llmstream/xk6-llmstream/internal/protocol"
)

// go-sse, the library we framed SSE with before, is the oracle: for any body,
// cut into reads of any size, our framer must hand over the same events (type,
// last event id, data) and end the same way (clean, too large, read error).

var errBrokenBody = errors.New("connection reset")

// framed is what a framer made of one body.
type framed struct {
	events []protocol.Event
	end    string // "" for a clean end, "too long", or the read error
}

func endOf(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, bufio.ErrTooLong):
		return "too long"
	}
	return err.Error()
}

// How a test body ends.
type bodyEnd int

const (
	endEOF        bodyEnd = iota
	endBroken             // a read error after the last bytes
	endBrokenWith         // a read error returned with the last bytes, as maxBodySize's is
)

// bodyReader reads body in pieces of at most piece bytes and ends as told.
func bodyReader(body []byte, piece int, end bodyEnd) io.Reader {
	return &endingReader{r: bytes.NewReader(body), piece: piece, end: end}
}

type endingReader struct {
	r     *bytes.Reader
	piece int
	end   bodyEnd
}

func (e *endingReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p[:min(len(p), e.piece)])
	switch {
	case e.end == endEOF:
		return n, err
	case err == io.EOF, e.end == endBrokenWith && n > 0 && e.r.Len() == 0: //nolint:errorlint // bytes.Reader's io.EOF
		return n, errBrokenBody
	}
	return n, err
}

func frameWithGoSSE(body []byte, piece, maxEventSize int, end bodyEnd) framed {
	var out framed
	for ev, err := range sse.Read(bodyReader(body, piece, end), &sse.ReadConfig{MaxEventSize: maxEventSize}) {
		if err != nil {
			out.end = endOf(err)
			break
		}
		if ev.Data != "" {
			out.events = append(out.events, protocol.Event{Type: ev.Type, ID: ev.LastEventID, Data: ev.Data})
		}
	}
	return out
}

func frameWithOurs(body []byte, piece, maxEventSize int, end bodyEnd) framed {
	var out framed
	f := newSSEFramer(bodyReader(body, piece, end), maxEventSize)
	for {
		ev, err := f.next()
		if err == io.EOF { //nolint:errorlint // returned unwrapped
			return out
		}
		if err != nil {
			out.end = endOf(err)
			return out
		}
		ev.Data = strings.Clone(ev.Data) // borrowed until the next call to next
		out.events = append(out.events, ev)
	}
}

func checkAgainstGoSSE(t *testing.T, body []byte, piece, maxEventSize int, end bodyEnd) framed {
	t.Helper()
	want := frameWithGoSSE(body, piece, maxEventSize, end)
	got := frameWithOurs(body, piece, maxEventSize, end)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("body %q in reads of %d, maxEventSize %d, end %d:\nours   %+v\ngo-sse %+v", body, piece, maxEventSize, end, got, want)
	}
	return got
}

func TestSSEFramerMatchesGoSSE(t *testing.T) {
	ev := func(typ, id, data string) protocol.Event { return protocol.Event{Type: typ, ID: id, Data: data} }
	cases := []struct {
		name string
		body string
		want []protocol.Event
	}{
		{"one event", "data: a\n\n", []protocol.Event{ev("", "", "a")}},
		{"final event without a blank line is dropped", "data: a\n\ndata: b\n", []protocol.Event{ev("", "", "a")}},
		{"final line without an end", "data: a\n\ndata: b", []protocol.Event{ev("", "", "a")}},
		{"CR line ends", "event: x\rdata: a\r\r", []protocol.Event{ev("x", "", "a")}},
		{"CRLF line ends", "data: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n", []protocol.Event{ev("", "", "a\nb"), ev("", "", "c")}},
		{"BOM", "\xEF\xBB\xBFdata: a\n\n", []protocol.Event{ev("", "", "a")}},
		{"BOM after blank lines", "\n\r\n\xEF\xBB\xBFdata: a\n\n", []protocol.Event{ev("", "", "a")}},
		{"second BOM is data", "\xEF\xBB\xBF\n\n\xEF\xBB\xBFdata: a\n\ndata: b\n\n", []protocol.Event{ev("", "", "b")}},
		{"comments and unknown fields", ": ping\nfoo: bar\ndata:a\nretry: 10\n\n", []protocol.Event{ev("", "", "a")}},
		{"field without colon", "data\ndata\n\n", []protocol.Event{ev("", "", "\n")}},
		{"only one space stripped", "data:  a \n\n", []protocol.Event{ev("", "", " a ")}},
		{"empty data is not dispatched", "event: x\ndata\n\ndata: a\n\n", []protocol.Event{ev("", "", "a")}},
		{"id persists, NUL ignored", "id: 1\ndata: a\n\nid: 2\x00\ndata: b\n\nid\ndata: c\n\n", []protocol.Event{ev("", "1", "a"), ev("", "1", "b"), ev("", "", "c")}},
		{"id without data", "id: 7\n\ndata: a\n\n", []protocol.Event{ev("", "7", "a")}},
		{"type resets", "event: x\ndata: a\n\ndata: b\n\n", []protocol.Event{ev("x", "", "a"), ev("", "", "b")}},
		{"long field names", "data x: a\ndataa: b\nevent:data: c\ndata: d\n\n", []protocol.Event{ev("data: c", "", "d")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for piece := 1; piece <= len(c.body); piece++ {
				got := checkAgainstGoSSE(t, []byte(c.body), piece, 1<<10, endEOF)
				if !reflect.DeepEqual(got.events, c.want) || got.end != "" {
					t.Fatalf("reads of %d: %+v, want %+v", piece, got, c.want)
				}
				got = checkAgainstGoSSE(t, []byte(c.body), piece, 1<<10, endBroken)
				if got.end != errBrokenBody.Error() {
					t.Fatalf("reads of %d, broken body: ended with %q", piece, got.end)
				}
				checkAgainstGoSSE(t, []byte(c.body), piece, 1<<10, endBrokenWith)
			}
		})
	}
}

// A CR ending one read and an LF starting the next are one line end: the LF is
// not a blank line that would end the event early.
func TestSSEFramerCRLFAcrossReads(t *testing.T) {
	body := []byte("data: a\r\ndata: b\r\n\r\n")
	for piece := 1; piece <= len(body); piece++ {
		got := checkAgainstGoSSE(t, body, piece, 1<<10, endEOF)
		if len(got.events) != 1 || got.events[0].Data != "a\nb" {
			t.Fatalf("reads of %d: %+v", piece, got)
		}
	}
}

// An event larger than maxEventSize is an error at the same byte as go-sse's,
// whatever the reads.
func TestSSEFramerTooLarge(t *testing.T) {
	for size := 8; size < 40; size++ {
		body := []byte("data: a\n\n" + "data: " + strings.Repeat("x", size) + "\n\ndata: b\n\n")
		for piece := 1; piece <= 9; piece++ {
			for _, maxSize := range []int{16, 24, 32} {
				checkAgainstGoSSE(t, body, piece, maxSize, endEOF)
			}
		}
	}
	got := frameWithOurs([]byte("data: a\n\ndata: "+strings.Repeat("x", 64)+"\n\n"), 7, 32, endEOF)
	if got.end != "too long" || len(got.events) != 1 {
		t.Fatalf("a 70-byte event under a 32-byte limit: %+v", got)
	}
}

// An event allocates nothing: its data is borrowed from the read buffer and
// the type of a repeated event is shared.
func TestSSEFramerAllocations(t *testing.T) {
	const events = 100
	var body bytes.Buffer
	for i := range events {
		fmt.Fprintf(&body, "event: content_block_delta\ndata: {\"i\":%d}\n\n", i)
	}
	r := bytes.NewReader(body.Bytes())
	buf := make([]byte, 0, 8192)
	f := newSSEFramer(r, 1<<16)
	f.buf = buf[:cap(buf)] // the buffer is reused across runs: measure the events
	allocs := testing.AllocsPerRun(20, func() {
		r.Reset(body.Bytes())
		f.r, f.err, f.start, f.end = r, nil, 0, 0
		for n := 0; ; n++ {
			if _, err := f.next(); err != nil {
				if n != events {
					t.Fatalf("%d events, want %d (%v)", n, events, err)
				}
				return
			}
		}
	})
	if allocs > 0 {
		t.Fatalf("%.0f allocations for %d events", allocs, events)
	}
}

// lineEnd finds what a loop over every byte finds, on every line of
// LF, CR and other bytes up to six long, from every starting point.
func TestLineEndIsTheFirstLineEnd(t *testing.T) {
	t.Parallel()
	byBytes := func(b []byte, from int, atEOF bool) (int, int) {
		for i := max(from, 0); i < len(b); i++ {
			switch b[i] {
			case '\n':
				return i, 1
			case '\r':
				switch {
				case i+1 < len(b):
					if b[i+1] == '\n' {
						return i, 2
					}
					return i, 1
				case i == 0 || atEOF:
					return i, 1
				}
				return -1, 0
			}
		}
		return -1, 0
	}
	alphabet := []byte{'a', '\r', '\n'}
	var lines func([]byte, int)
	lines = func(b []byte, n int) {
		for from := -1; from <= len(b)+1; from++ {
			for _, atEOF := range []bool{false, true} {
				gotN, gotEOL := lineEnd(b, from, atEOF)
				wantN, wantEOL := byBytes(b, from, atEOF)
				if gotN != wantN || gotEOL != wantEOL {
					t.Fatalf("lineEnd(%q, %d, %v) = %d, %d; want %d, %d", b, from, atEOF, gotN, gotEOL, wantN, wantEOL)
				}
			}
		}
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			lines(append(b[:len(b):len(b)], c), n-1)
		}
	}
	lines(nil, 6)
}
