package stream

import (
	"bufio"
	"bytes"
	"io"
	"unsafe"

	"github.com/llmstream/xk6-llmstream/internal/protocol"
)

// sseFramer cuts a Server-Sent Events body into events. It exists because a
// library framer (go-sse) copied every line and then every event's data once
// more, garbage per token that at many streams keeps Go's GC marking on a CPU
// the readers need. Here an event costs one allocation,
// its Data string, copied straight from the read buffer when it has one data
// line; the buffer is reused, event types that repeat are shared.
//
// It reproduces go-sse's Read exactly (go-sse is its oracle in the tests): the
// same events, the same last event id, the same too-large error at the same byte,
// the same end. To get the same too-large boundary it manages its buffer the way
// bufio.Scanner (under go-sse) does: an event, from the end of the one before,
// may fill the buffer, which grows from 4 KiB by doubling up to maxEventSize;
// reads ask for no more than the room left, so the reads and thus where a
// CR LF pair falls are the same.
//
// It is pull-based: next frames what is buffered before it reads again, so an
// event is handed over as soon as its blank line is in the buffer, with the
// arrival time of the read that brought it.
type sseFramer struct {
	r   io.Reader
	max int
	err error // the read error (io.EOF at the end) that stops reading

	buf        []byte
	pooled     *[]byte // the buffer readBuffers gave (release)
	start, end int     // buf[start:end] is unconsumed; the current event begins at start

	// Where the framer is inside the current event, relative to start.
	pos      int  // the first byte of the line not framed yet
	scanned  int  // how far that line was searched for its end (long lines, small reads)
	sawLine  bool // a non-empty line: the next blank line ends the event
	bomSeen  bool // the stream's first line was looked at for a byte order mark
	dataSeen int  // data lines in this event
	dataAt   span // the only data line, while there is one
	typeAt   span
	joined   []byte // data lines joined by "\n", once there are two; reused

	lastEventID string // persists across events, as the spec's last event ID does
	types       []string
}

// span is a field value's place in the current event, relative to its start.
type span struct{ from, to int }

const (
	sseStartBufSize = 4096 // bufio.Scanner's first buffer: the same reads as go-sse
	sseMaxTypes     = 8    // event types remembered to share their strings
	sseMaxEmptyRead = 100  // bufio.Scanner's limit of reads that return nothing
	utf8BOM         = "\xEF\xBB\xBF"
)

func newSSEFramer(r io.Reader, maxEventSize int) *sseFramer {
	f := &sseFramer{}
	f.init(r, maxEventSize)
	return f
}

// init makes f a framer of r with a pooled read buffer (release hands it
// back).
func (f *sseFramer) init(r io.Reader, maxEventSize int) {
	pooled := readBuffers.get()
	buf := *pooled
	if maxEventSize > 0 && maxEventSize < len(buf) {
		buf = buf[:maxEventSize] // an event that fills it is too large
	}
	*f = sseFramer{r: r, max: maxEventSize, buf: buf, pooled: pooled}
}

// release hands the read buffer back for the next call (the one it
// started with: one grown for a large event is left to the collector).
// Nothing borrowed from it may be used after.
func (f *sseFramer) release() {
	readBuffers.put(f.pooled)
	f.buf, f.pooled, f.start, f.end = nil, nil, 0, 0
}

// next returns the next event with non-empty data, io.EOF at the end of the
// body, bufio.ErrTooLong when an event does not fit in maxEventSize, or the
// read error. An unfinished event at the end is dropped, as the spec says.
func (f *sseFramer) next() (protocol.Event, error) {
	for {
		if f.end > f.start || f.err != nil {
			if ev, ok := f.frame(f.err != nil); ok {
				return ev, nil
			}
		}
		if f.err != nil {
			return protocol.Event{}, f.err
		}
		if err := f.makeRoom(); err != nil {
			return protocol.Event{}, err
		}
		f.fill()
	}
}

// makeRoom moves the current event to the front or grows the buffer, exactly
// as bufio.Scanner would, and refuses to grow past maxEventSize.
func (f *sseFramer) makeRoom() error {
	if f.start > 0 && (f.end == len(f.buf) || f.start > len(f.buf)/2) {
		copy(f.buf, f.buf[f.start:f.end])
		f.end -= f.start
		f.start = 0
	}
	if f.end < len(f.buf) {
		return nil
	}
	if len(f.buf) >= f.max {
		f.err = bufio.ErrTooLong
		return f.err
	}
	size := min(max(len(f.buf)*2, sseStartBufSize), f.max)
	buf := make([]byte, size)
	copy(buf, f.buf[f.start:f.end])
	f.buf = buf
	f.end -= f.start
	f.start = 0
	return nil
}

// fill reads once into the room left; a reader that keeps returning nothing
// is an error, not a spin.
func (f *sseFramer) fill() {
	for empty := 0; ; {
		n, err := f.r.Read(f.buf[f.end:])
		if n < 0 || n > len(f.buf)-f.end {
			f.err = bufio.ErrBadReadCount
			return
		}
		f.end += n
		if err != nil {
			f.err = err
			return
		}
		if n > 0 {
			return
		}
		if empty++; empty > sseMaxEmptyRead {
			f.err = io.ErrNoProgress
			return
		}
	}
}

// frame reads the buffered lines of the current event; it returns an event
// when a blank line ends one that has data. atEOF: nothing more will come, so
// a CR at the end is a whole line end and an unterminated last line is dropped.
func (f *sseFramer) frame(atEOF bool) (protocol.Event, bool) {
	for {
		ev := f.buf[f.start:f.end]
		n, eol := lineEnd(ev[f.pos:], f.scanned-f.pos, atEOF)
		if n < 0 {
			if atEOF || f.pos == len(ev) {
				f.pos = len(ev) // an unterminated last line: the event never ends
				f.scanned = f.pos
				return protocol.Event{}, false
			}
			f.scanned = len(ev)
			if ev[len(ev)-1] == '\r' {
				f.scanned-- // a CR waiting for a possible LF: look at it again
			}
			return protocol.Event{}, false
		}
		from := f.pos
		f.pos += n + eol
		f.scanned = f.pos
		if n > 0 {
			f.sawLine = true
			f.field(ev, from, from+n)
			continue
		}
		if !f.sawLine {
			continue // blank lines between events
		}
		out, ok := f.dispatch(ev)
		f.start += f.pos
		f.pos, f.scanned, f.sawLine = 0, 0, false
		if ok {
			return out, true
		}
	}
}

// lineEnd finds the end of the line at the head of b: its length and the
// length of its end (CR, LF or CR LF), or n = -1 when it has not ended yet. A
// CR last in b ends a blank line at once (its event is complete, an LF after
// it is a blank line between events) but not a non-empty line, whose LF may
// still come. from: the bytes already searched.
//
// The line's end is the first LF, or a CR before it: two searches of the
// line for one byte, which bytes.IndexByte makes many bytes at a time,
// where a loop over every byte of an event's data (a JSON chunk of a
// hundred bytes or more, at every token) was most of the framing's time.
func lineEnd(b []byte, from int, atEOF bool) (n, eol int) {
	from = max(from, 0)
	if from >= len(b) {
		return -1, 0
	}
	rest := b[from:]
	lf := bytes.IndexByte(rest, '\n')
	line := rest
	if lf >= 0 {
		line = rest[:lf]
	}
	cr := bytes.IndexByte(line, '\r')
	if cr < 0 {
		if lf < 0 {
			return -1, 0
		}
		return from + lf, 1
	}
	i := from + cr
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

// field applies one non-empty line, ev[from:to], to the current event: go-sse's
// rules, which are the spec's: a name of data, event, id or retry, then an
// optional colon and one optional space; anything else is ignored.
func (f *sseFramer) field(ev []byte, from, to int) {
	if !f.bomSeen {
		f.bomSeen = true
		if line := ev[from:to]; len(line) >= len(utf8BOM) && string(line[:len(utf8BOM)]) == utf8BOM {
			from += len(utf8BOM)
		}
	}
	line := ev[from:to]
	colon := bytes.IndexByte(line, ':')
	name, value := line, span{to, to}
	if colon >= 0 {
		name = line[:colon]
		value.from = from + colon + 1
		if value.from < to && ev[value.from] == ' ' {
			value.from++
		}
	}
	switch string(name) {
	case "data":
		f.dataSeen++
		switch f.dataSeen {
		case 1:
			f.dataAt = value
			return
		case 2:
			f.joined = append(f.joined[:0], ev[f.dataAt.from:f.dataAt.to]...)
		}
		f.joined = append(f.joined, '\n')
		f.joined = append(f.joined, ev[value.from:value.to]...)
	case "event":
		f.typeAt = value
	case "id":
		id := ev[value.from:value.to]
		if bytes.IndexByte(id, 0) < 0 && string(id) != f.lastEventID {
			f.lastEventID = string(id)
		}
	}
}

// dispatch ends the current event; it returns it if its data is not empty.
func (f *sseFramer) dispatch(ev []byte) (protocol.Event, bool) {
	// The data is borrowed, not copied: a view of the read buffer (or of
	// joined) valid until the next call to next. The call copies the little
	// it keeps (Call.handle); an event then allocates nothing. A copy per
	// event would be garbage at the rate of the tokens, and every collection
	// it brought would make all readers late together.
	var data string
	switch {
	case f.dataSeen == 1:
		data = borrow(ev[f.dataAt.from:f.dataAt.to])
	case f.dataSeen > 1:
		data = borrow(f.joined)
	}
	typ := f.typeAt
	f.dataSeen, f.typeAt = 0, span{}
	if data == "" {
		return protocol.Event{}, false
	}
	return protocol.Event{Type: f.eventType(ev[typ.from:typ.to]), ID: f.lastEventID, Data: data}, true
}

// eventType returns the event's type, sharing the string of a type seen
// before: a stream repeats a handful of them.
func (f *sseFramer) eventType(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	for _, t := range f.types {
		if t == string(b) {
			return t
		}
	}
	t := string(b)
	if len(f.types) < sseMaxTypes {
		f.types = append(f.types, t)
	}
	return t
}

// borrow is b as a string without a copy; b must not change while the
// string is in use.
func borrow(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b)) // #nosec G103 -- a zero-copy view: the caller keeps b unchanged while the string lives (documented above)
}
