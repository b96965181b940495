package trace

import (
	"encoding/binary"
	"unsafe"
)

// A trace's rows are held as one stream of varints, with the decoder's state
// saved every markEvery rows, so any row is found by decoding at most
// markEvery-1 rows before it, and a cursor reads on in order at a few
// nanoseconds a row. A row is:
//   - its offset: microseconds after the previous row's (offsets are kept to
//     the microsecond; a replay's timers are far coarser);
//   - its input and output lengths;
//   - in traces with prefix identity, its hash ids as runs of consecutive
//     ids, as many runs as make its ceil(input / blockSize) ids. A run is its
//     first id, as a signed distance from where that id is likeliest, and a
//     flag for a run longer than one id, followed by its length − 2 when set.
//     A row's first run is measured from the previous row's first id (rows of
//     one conversation, or behind one system prompt, start alike); its later
//     runs from one past the largest id so far (a trace numbers the blocks it
//     has not seen before in order).
//
// Mooncake's rows are mostly a shared run and a fresh one: 15 ids take a few
// bytes, not 60 as flat 32-bit ids would, and nothing about them is lost.
type rowStore struct {
	data  []byte
	marks []rowState // the state before rows 0, markEvery, 2·markEvery, …
	n     int
	bs    int64    // tokens per hash id; 0: rows carry no ids
	last  rowState // the state after the last row added
}

const markEvery = 64

// rowState is what decoding a row needs from the rows before it.
type rowState struct {
	pos   int   // where the row starts in data
	at    int64 // the previous row's offset, µs
	first int64 // the previous row's first hash id
	fresh int64 // one past the largest hash id so far
}

func newRowStore(blockSize int) *rowStore { return &rowStore{bs: int64(blockSize)} }

// add appends a row; the caller has checked that at does not go back and
// that ids holds ceil(in / bs) ids.
func (s *rowStore) add(at int64, in, out int32, ids []uint32) {
	st := &s.last
	if s.n%markEvery == 0 {
		s.marks = append(s.marks, *st)
	}
	s.data = binary.AppendUvarint(s.data, uint64(at-st.at)) // #nosec G115 -- rows are in time order
	s.data = binary.AppendUvarint(s.data, uint64(in))       // #nosec G115 -- a positive token count
	s.data = binary.AppendUvarint(s.data, uint64(out))      // #nosec G115 -- a token count, not negative
	st.at = at
	for j := 0; j < len(ids); {
		k := j + 1
		for k < len(ids) && ids[k-1] != ^uint32(0) && ids[k] == ids[k-1]+1 {
			k++
		}
		base := st.fresh
		if j == 0 {
			base = st.first
		}
		head := zigzag(int64(ids[j])-base) << 1
		if k-j > 1 {
			head |= 1
		}
		s.data = binary.AppendUvarint(s.data, head)
		if k-j > 1 {
			s.data = binary.AppendUvarint(s.data, uint64(k-j-2)) // #nosec G115 -- a run's length
		}
		st.fresh = max(st.fresh, int64(ids[k-1])+1)
		j = k
	}
	if len(ids) > 0 {
		st.first = int64(ids[0])
	}
	s.n++
	st.pos = len(s.data)
}

// clip drops the slack appending left, once the last row is in.
func (s *rowStore) clip() {
	s.data = append([]byte(nil), s.data...)
	s.marks = append([]rowState(nil), s.marks...)
}

// bytes is what the rows take in memory.
func (s *rowStore) bytes() int { return cap(s.data) + cap(s.marks)*int(unsafe.Sizeof(rowState{})) }

// maxID is the largest hash id (-1 without any).
func (s *rowStore) maxID() int64 { return s.last.fresh - 1 }

// rowCursor decodes rows in order; a copy reads on independently.
type rowCursor struct {
	s  *rowStore
	i  int // the row next decodes
	st rowState
}

// cursor is positioned at row i (0 ≤ i ≤ n).
func (s *rowStore) cursor(i int) rowCursor {
	m := min(i/markEvery, len(s.marks)-1)
	if m < 0 {
		return rowCursor{s: s}
	}
	c := rowCursor{s: s, i: m * markEvery, st: s.marks[m]}
	for c.i < i {
		c.next(nil)
	}
	return c
}

// next decodes row c.i: its offset (µs), lengths, and its ids appended to
// *ids (skipped when ids is nil).
func (c *rowCursor) next(ids *[]uint32) (at int64, in, out int32) {
	st := &c.st
	st.at += int64(c.uvarint()) // #nosec G115 -- written from a non-negative int64
	at = st.at
	in = int32(c.uvarint())  // #nosec G115 -- written from an int32
	out = int32(c.uvarint()) // #nosec G115 -- written from an int32
	if c.s.bs > 0 {
		left := (int64(in) + c.s.bs - 1) / c.s.bs
		for j := int64(0); left > 0; j++ {
			head := c.uvarint()
			n := int64(1)
			if head&1 != 0 {
				n = int64(c.uvarint()) + 2 // #nosec G115 -- a run's length
			}
			base := st.fresh
			if j == 0 {
				base = st.first
			}
			start := base + unzigzag(head>>1)
			if j == 0 {
				st.first = start
			}
			if ids != nil {
				for k := range n {
					*ids = append(*ids, uint32(start+k)) // #nosec G115 -- written from uint32 ids
				}
			}
			st.fresh = max(st.fresh, start+n)
			left -= n
		}
	}
	c.i++
	return at, in, out
}

func (c *rowCursor) uvarint() uint64 {
	v, n := binary.Uvarint(c.s.data[c.st.pos:])
	c.st.pos += n
	return v
}

func zigzag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) } // #nosec G115 -- bit pattern

func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) } // #nosec G115 -- bit pattern
