package report

import (
	"fmt"
	"math/big"
	"sort"
	"strings"
)

// segment is a k6 execution segment: the share (from, to] of the test an
// instance ran, as k6 writes it ("0:1/2", "1/2:1"); k6 also accepts decimals
// and percentages ("0.5", "50%"), so the parser does too.
type segment struct {
	from, to *big.Rat
	name     string // as written in the record
}

func parseSegment(s string) (segment, error) {
	if s == "" {
		return segment{from: new(big.Rat), to: big.NewRat(1, 1), name: ""}, nil
	}
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return segment{}, fmt.Errorf("execution segment %q is not from:to", s)
	}
	from, err := parseShare(a)
	if err != nil {
		return segment{}, fmt.Errorf("execution segment %q: %w", s, err)
	}
	to, err := parseShare(b)
	if err != nil {
		return segment{}, fmt.Errorf("execution segment %q: %w", s, err)
	}
	if from.Sign() < 0 || to.Cmp(big.NewRat(1, 1)) > 0 || from.Cmp(to) >= 0 {
		return segment{}, fmt.Errorf("execution segment %q is not within 0:1 with from < to", s)
	}
	return segment{from: from, to: to, name: s}, nil
}

func parseShare(s string) (*big.Rat, error) {
	s = strings.TrimSpace(s)
	scale := big.NewRat(1, 1)
	if p, ok := strings.CutSuffix(s, "%"); ok {
		s, scale = p, big.NewRat(1, 100)
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, fmt.Errorf("%q is not a fraction, decimal or percentage", s)
	}
	return r.Mul(r, scale), nil
}

func (s segment) String() string {
	if s.name == "" {
		return "0:1 (whole test)"
	}
	return s.name
}

// checkCoverage says whether the segments, one per named source, tile the
// whole test exactly once: no overlap, no hole.
func checkCoverage(names []string, segs []segment) error {
	idx := make([]int, len(segs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return segs[idx[a]].from.Cmp(segs[idx[b]].from) < 0 })
	at := new(big.Rat)
	prev := -1
	for _, i := range idx {
		s := segs[i]
		switch c := s.from.Cmp(at); {
		case c < 0:
			return fmt.Errorf("%s (segment %s) overlaps %s (segment %s): the same part of the test would be counted twice",
				names[i], s, names[prev], segs[prev]) // #nosec G602 -- prev ≥ 0: no segment starts below 0 (parseSegment), so the first cannot overlap
		case c > 0:
			return fmt.Errorf("no record covers the execution segment %s:%s (missing an instance?)", ratString(at), ratString(s.from))
		}
		at, prev = s.to, i
	}
	if at.Cmp(big.NewRat(1, 1)) != 0 {
		return fmt.Errorf("no record covers the execution segment %s:1 (missing an instance?)", ratString(at))
	}
	return nil
}

func ratString(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	return r.String()
}
