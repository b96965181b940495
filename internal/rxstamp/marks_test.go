package rxstamp

import "testing"

func TestMarksGoForwardAndAreForgottenOncePassed(t *testing.T) {
	var m marks
	if _, ok := m.next(0); ok {
		t.Fatal("a new connection has marks")
	}
	m.add(10, 100)
	m.add(10, 150) // no further than the last: dropped
	m.add(25, 200)
	for _, c := range []struct {
		off     int64
		end, ns int64
		ok      bool
	}{
		{0, 10, 100, true},
		{9, 10, 100, true},
		{10, 25, 200, true}, // the first is passed and forgotten
		{25, 0, 0, false},
	} {
		got, ok := m.next(c.off)
		if ok != c.ok || got.end != c.end || got.ns != c.ns {
			t.Fatalf("next(%d) = %+v %v, want {%d %d} %v", c.off, got, ok, c.end, c.ns, c.ok)
		}
	}
	if len(m.list) != 0 || m.n.Load() != 0 {
		t.Fatal("all marks passed, and one is left")
	}
	for i := range maxMarks + 3 {
		m.add(int64(100+i), int64(i))
	}
	if len(m.list) != maxMarks || m.list[maxMarks-1].end != 100+maxMarks-1 {
		t.Fatalf("kept %d marks, want the first %d", len(m.list), maxMarks)
	}
}
