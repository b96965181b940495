// Package trace reads production request traces (Mooncake, Alibaba Bailian,
// BurstGPT, Azure LLM inference) into one compact, read-only table: each
// request's offset from the first, its prompt and output length and, where
// the trace has them, the ids of its prompt's blocks (shared ids = shared
// prefix). Prompts are built from it on demand (Prompt), so a trace of
// millions of rows is held once per process in one compact stream (a few
// bytes a row, rows.go), never as text and never per VU.
package trace

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// Formats, as named in options and detected from a file's first line.
const (
	Mooncake = "mooncake"
	Bailian  = "bailian"
	BurstGPT = "burstgpt"
	Azure    = "azure"
)

// blockSizes are the tokens per hash id each format's trace was cut with.
var blockSizes = map[string]int{Mooncake: 512, Bailian: 16} //nolint:gochecknoglobals // read-only table

// Options select and cut what is read.
type Options struct {
	Format    string  `opt:"format"`                                                                                     // "" or "auto": detected from the first line
	BlockSize int     `opt:"blockSize,positive" want:"a whole number of tokens above 0 (leave it out for the format's)"` // tokens per hash id; absent: the format's (Mooncake 512, Bailian 16)
	Start     float64 `opt:"start"`                                                                                      // seconds into the trace where the replay begins
	Duration  float64 `opt:"duration,positive" want:"a number of seconds above 0 (leave it out to replay to the end)"`   // seconds of the trace replayed from start; absent: to the end
	MaxRows   int     `opt:"maxRows,positive" want:"a whole number above 0 (leave it out for every row)"`                // at most this many rows; absent: all
	// KeepFailed keeps BurstGPT's failed requests (0 response tokens), sent
	// with the minimum output; by default they are skipped and counted.
	KeepFailed bool `opt:"keepFailed"`
}

// Trace is a read trace: Rows() requests, row i's offset and lengths Row(i)
// and its hash ids HashIDs(i), held in a compact stream (rows.go).
type Trace struct {
	Name      string // the file, for messages
	Format    string
	BlockSize int // tokens per hash id (0 without prefix identity)
	rows      *rowStore
	// Skipped counts rows left out on purpose (BurstGPT failures), Outside
	// the rows read before the window's start or after its end (reading
	// stops at maxRows).
	Skipped, Outside int
	// Turns counts Bailian rows that continue a conversation (turn > 1).
	Turns int
}

// Row is one request of a trace.
type Row struct {
	Offset float64 // seconds from the first replayed row (to the microsecond)
	Input  int32   // prompt tokens
	Output int32   // output tokens
}

// Rows is the number of requests replayed.
func (t *Trace) Rows() int { return t.rows.n }

// Row is row i (0 ≤ i < Rows()).
func (t *Trace) Row(i int) Row {
	c := t.rows.cursor(i)
	at, in, out := c.next(nil)
	return Row{Offset: seconds(at), Input: in, Output: out}
}

// HasPrefixes says whether rows carry hash ids (Mooncake, Bailian): without
// them every prompt is unique.
func (t *Trace) HasPrefixes() bool { return t.rows.bs > 0 }

// HashIDs is row i's block ids (nil without prefix identity).
func (t *Trace) HashIDs(i int) []uint32 {
	if !t.HasPrefixes() {
		return nil
	}
	var ids []uint32
	c := t.rows.cursor(i)
	c.next(&ids)
	return ids
}

// OffsetsFrom reads the offsets in seconds in order from row i, one row a
// call (at most Rows() − i calls): how a schedule replays them without a
// copy.
func (t *Trace) OffsetsFrom(i int) func() float64 {
	c := t.rows.cursor(i)
	return func() float64 {
		if c.i >= t.rows.n {
			return t.Span()
		}
		at, _, _ := c.next(nil)
		return seconds(at)
	}
}

// Bytes is what the rows take in memory.
func (t *Trace) Bytes() int { return t.rows.bytes() }

// Span is the seconds from the first replayed row to the last.
func (t *Trace) Span() float64 { return seconds(t.rows.last.at) }

// MeanRate is rows per second over the span (0 for fewer than two rows or a
// zero span).
func (t *Trace) MeanRate() float64 {
	if t.Rows() < 2 || t.Span() <= 0 {
		return 0
	}
	return float64(t.Rows()-1) / t.Span()
}

func seconds(micros int64) float64 { return float64(micros) / 1e6 }

// Error is bad input in a trace file: the file, the line (1-based; 0 when
// it is about the whole file) and what is wrong.
type Error struct {
	File   string
	Line   int
	Reason string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("trace %s: %s", e.File, e.Reason)
	}
	return fmt.Sprintf("trace %s line %d: %s", e.File, e.Line, e.Reason)
}

// Read reads a whole trace from r (name is the file, for messages).
func Read(r io.Reader, name string, o Options) (*Trace, error) {
	if o.Start < 0 || o.Duration < 0 || o.MaxRows < 0 || o.BlockSize < 0 ||
		math.IsNaN(o.Start) || math.IsNaN(o.Duration) {
		return nil, &Error{File: name, Reason: "start, duration, maxRows and blockSize must not be negative"}
	}
	br, format, err := detect(r, name, strings.ToLower(o.Format))
	if err != nil {
		return nil, err
	}
	b := &builder{t: &Trace{Name: name, Format: format}, o: o}
	if bs, ok := blockSizes[format]; ok {
		b.t.BlockSize = bs
		if o.BlockSize > 0 {
			b.t.BlockSize = o.BlockSize
		}
	} else if o.BlockSize > 0 {
		return nil, &Error{File: name, Reason: fmt.Sprintf("blockSize is for traces with hash_ids; %s has no prefix identity", format)}
	}
	b.t.rows = newRowStore(b.t.BlockSize)
	switch format {
	case Mooncake, Bailian:
		err = readJSONL(br, b)
	default:
		err = readCSV(br, b)
	}
	if err != nil {
		return nil, err
	}
	if b.t.Rows() == 0 {
		return nil, &Error{File: name, Reason: "no rows to replay (after the window, maxRows and skipped failures)"}
	}
	b.t.rows.clip()
	return b.t, nil
}

// maxOffsetMicros bounds an offset (about 100 years), far inside int64.
const maxOffsetMicros = 100 * 365 * 24 * 3600 * 1e6

// builder appends rows in file order, checking time order and cutting the
// window.
type builder struct {
	t     *Trace
	o     Options
	first float64 // the first row's time (seconds, the file's own origin)
	seen  bool
	prev  float64
	base  float64 // the first replayed row's time
	based bool
	done  bool // past the window or maxRows: the rest of the file is only counted
}

// add takes one row at time ts seconds (the file's clock).
func (b *builder) add(line int, ts float64, in, out int64, ids []uint32) error {
	name := b.t.Name
	if math.IsNaN(ts) || math.IsInf(ts, 0) {
		return &Error{File: name, Line: line, Reason: "the timestamp is not a number"}
	}
	if b.seen && ts < b.prev {
		return &Error{File: name, Line: line, Reason: fmt.Sprintf(
			"timestamp %v is before the previous row's %v: rows must be sorted by time", ts, b.prev)}
	}
	if !b.seen {
		b.seen, b.first = true, ts
	}
	b.prev = ts
	if in < 1 || in > math.MaxInt32 {
		return &Error{File: name, Line: line, Reason: fmt.Sprintf("prompt length %d must be a positive token count", in)}
	}
	if out < 0 || out > math.MaxInt32 {
		return &Error{File: name, Line: line, Reason: fmt.Sprintf("output length %d must not be negative", out)}
	}
	if b.t.HasPrefixes() {
		bs := int64(b.t.BlockSize)
		if want := (in + bs - 1) / bs; int64(len(ids)) != want {
			return &Error{File: name, Line: line, Reason: fmt.Sprintf(
				"%d hash_ids for input_length %d: blocks of %d tokens make %d (is blockSize right?)", len(ids), in, bs, want)}
		}
	}
	rel := ts - b.first
	if b.done || rel < b.o.Start || (b.o.Duration > 0 && rel >= b.o.Start+b.o.Duration) {
		b.t.Outside++
		return nil
	}
	if !b.based {
		b.based, b.base = true, ts
	}
	at := math.Round((ts - b.base) * 1e6)
	if at > maxOffsetMicros {
		return &Error{File: name, Line: line, Reason: fmt.Sprintf(
			"timestamp %v is more than 100 years after the first replayed row's", ts)}
	}
	b.t.rows.add(int64(at), int32(in), int32(out), ids) //nolint:gosec // checked above
	if b.o.MaxRows > 0 && b.t.Rows() >= b.o.MaxRows {
		b.done = true
	}
	return nil
}
