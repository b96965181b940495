package dataset

import (
	"fmt"
	"sort"
)

// Share is the part of a test that one load generator runs when a test is
// split across several k6 instances (execution segments). k6 splits its own
// work by striping: of every lcd consecutive units (VUs, iterations), an
// instance takes those at fixed positions, and the instances' positions
// partition each cycle. A Share applies the same striping to the units of the
// extension's process-wide sequences (dataset items, arrivals), so the
// instances together run exactly what one instance would run alone, once.
//
// The zero Share is the whole test.
type Share struct {
	segment  string  // k6's notation, e.g. "1/3:2/3"
	sequence string  // e.g. "0,1/3,2/3,1"
	lcd      int64   // cycle length
	pos      []int64 // positions this instance takes in each cycle, ascending
}

// maxShareCycle bounds the cycle: k6 holds the same table for its own
// striping, so a sequence k6 accepts stays far below it in practice.
const maxShareCycle = 1 << 24

// NewShare builds a Share from k6's striped offsets of a segment in its
// sequence (lib.ExecutionTuple.GetStripedOffsets): start is the first
// position, offsets the distances from each taken position to the next (the
// last one wraps around into the next cycle), lcd the cycle length. segment
// and sequence are k6's notation, kept for messages and the run record.
func NewShare(segment, sequence string, start int64, offsets []int64, lcd int64) (Share, error) {
	if lcd < 1 || lcd > maxShareCycle {
		return Share{}, fmt.Errorf("execution segment %s: cycle of %d units is out of range [1, %d]", segment, lcd, maxShareCycle)
	}
	if len(offsets) == 0 || int64(len(offsets)) > lcd || start < 0 || start >= lcd {
		return Share{}, fmt.Errorf("execution segment %s: invalid striping (start %d, %d offsets, cycle %d)",
			segment, start, len(offsets), lcd)
	}
	pos := make([]int64, len(offsets))
	p := start
	for i, off := range offsets {
		if off < 1 {
			return Share{}, fmt.Errorf("execution segment %s: striping offset %d is not positive", segment, off)
		}
		pos[i] = p
		p += off
	}
	if p != start+lcd || pos[len(pos)-1] >= lcd {
		return Share{}, fmt.Errorf("execution segment %s: striping offsets do not make one cycle of %d", segment, lcd)
	}
	s := Share{segment: segment, sequence: sequence, lcd: lcd, pos: pos}
	if s.Full() {
		return Share{}, nil
	}
	return s, nil
}

// Full says whether this instance runs the whole test.
func (s Share) Full() bool { return int64(len(s.pos)) == s.lcd }

// Segment is the execution segment in k6's notation ("0:1" for the whole test).
func (s Share) Segment() string {
	if s.Full() {
		return "0:1"
	}
	return s.segment
}

// Sequence is the execution segment sequence in k6's notation ("" when none
// was given and k6 filled it in around the segment).
func (s Share) Sequence() string { return s.sequence }

// Fraction is the part of the units this instance takes.
func (s Share) Fraction() float64 {
	if s.Full() {
		return 1
	}
	return float64(len(s.pos)) / float64(s.lcd)
}

// Nth is the global index of this instance's k-th unit (k from 0).
func (s Share) Nth(k uint64) uint64 {
	if s.Full() {
		return k
	}
	n := uint64(len(s.pos))
	return k/n*uint64(s.lcd) + uint64(s.pos[k%n]) // #nosec G115 -- positions are non-negative
}

// Owns says whether the unit with global index g is this instance's.
func (s Share) Owns(g uint64) bool {
	if s.Full() {
		return true
	}
	p := int64(g % uint64(s.lcd)) // #nosec G115 -- below lcd
	i := sort.Search(len(s.pos), func(i int) bool { return s.pos[i] >= p })
	return i < len(s.pos) && s.pos[i] == p
}

// Count is how many of the first n global units are this instance's: its
// part of a total of n (k6's ExecutionTuple.ScaleInt64).
func (s Share) Count(n uint64) uint64 {
	if s.Full() {
		return n
	}
	rem := int64(n % uint64(s.lcd)) // #nosec G115 -- below lcd
	within := sort.Search(len(s.pos), func(i int) bool { return s.pos[i] >= rem })
	return n/uint64(s.lcd)*uint64(len(s.pos)) + uint64(within) // #nosec G115 -- non-negative
}
