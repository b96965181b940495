package dataset

import (
	"testing"

	"go.k6.io/k6/lib"
)

// k6Shares returns one Share per segment of sequence, striped by k6 itself:
// the tests check the extension's split against k6's own, not a copy of it.
func k6Shares(t *testing.T, sequence string) []Share {
	t.Helper()
	seq, err := lib.NewExecutionSegmentSequenceFromString(sequence)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]Share, len(seq))
	for i, seg := range seq {
		et, err := lib.NewExecutionTuple(seg, &seq)
		if err != nil {
			t.Fatal(err)
		}
		start, offsets, lcd := et.GetStripedOffsets()
		out[i], err = NewShare(seg.String(), seq.String(), start, offsets, lcd)
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

var testSequences = []string{"0,1/2,1", "0,1/3,2/3,1", "0,1/4,1/2,1", "0,0.3,0.7,1", "0,1/5,2/5,3/5,4/5,1"}

// The shares of a sequence partition the units: each unit has exactly one
// owner, an instance's k-th unit is the k-th it owns, and its count of the
// first n units is k6's own scaling of n.
func TestSharesPartitionUnitsLikeK6(t *testing.T) {
	for _, sequence := range testSequences {
		shares := k6Shares(t, sequence)
		seq, _ := lib.NewExecutionSegmentSequenceFromString(sequence)
		seen := make([]uint64, len(shares)) // units owned so far, per share
		for g := range uint64(1000) {
			owners := 0
			for i, s := range shares {
				if !s.Owns(g) {
					continue
				}
				owners++
				if nth := s.Nth(seen[i]); nth != g {
					t.Fatalf("%s: share %s: unit %d is its #%d, but Nth says %d", sequence, s.Segment(), g, seen[i], nth)
				}
				seen[i]++
			}
			if owners != 1 {
				t.Fatalf("%s: unit %d has %d owners", sequence, g, owners)
			}
			for i, s := range shares {
				et, _ := lib.NewExecutionTuple(seq[i], &seq)
				if got, want := s.Count(g+1), et.ScaleInt64(int64(g+1)); got != uint64(want) { //nolint:gosec // small
					t.Fatalf("%s: share %s: count of %d units %d, k6 says %d", sequence, s.Segment(), g+1, got, want)
				}
			}
		}
	}
}

func TestShareWholeTest(t *testing.T) {
	var zero Share
	whole := k6Shares(t, "0,1")[0]
	for _, s := range []Share{zero, whole} {
		if !s.Full() || s.Segment() != "0:1" || s.Fraction() != 1 || s.Nth(7) != 7 || !s.Owns(7) || s.Count(7) != 7 {
			t.Fatalf("whole test share %+v", s)
		}
	}
	third := k6Shares(t, "0,1/3,2/3,1")[1]
	if third.Full() || third.Segment() != "1/3:2/3" || third.Sequence() != "0,1/3,2/3,1" || third.Fraction() != 1.0/3 {
		t.Fatalf("third %+v: segment %s fraction %v", third, third.Segment(), third.Fraction())
	}
}

func TestShareRejectsBadStriping(t *testing.T) {
	for _, c := range []struct {
		start   int64
		offsets []int64
		lcd     int64
	}{
		{0, nil, 2},           // takes nothing
		{0, []int64{1}, 0},    // no cycle
		{2, []int64{2}, 2},    // starts outside the cycle
		{0, []int64{0, 2}, 2}, // offset 0 would take a unit twice
		{0, []int64{1}, 2},    // does not close the cycle
		{0, []int64{3}, 2},    // overshoots it
	} {
		if _, err := NewShare("x", "y", c.start, c.offsets, c.lcd); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}
