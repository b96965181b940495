package rxstamp

import "testing"

func TestMarksGoForwardAndAreForgottenOncePassed(t *testing.T) {
	var m marks
	if _, ok := m.next(0); ok {
		t.Fatal("a new connection has marks")
	}
	m.add(10, 100, 90)
	m.add(10, 150, 140) // no further than the last: nothing new
	m.add(25, 200, 190)
	for _, c := range []struct {
		off  int64
		want mark
		ok   bool
	}{
		{0, mark{10, 100, 90}, true},
		{9, mark{10, 100, 90}, true},
		{10, mark{25, 200, 190}, true}, // the first is passed and forgotten
		{25, mark{}, false},
	} {
		got, ok := m.next(c.off)
		if ok != c.ok || got != c.want {
			t.Fatalf("next(%d) = %+v %v, want %+v %v", c.off, got, ok, c.want, c.ok)
		}
	}
	if len(m.list) != 0 || m.n.Load() != 0 {
		t.Fatal("all marks passed, and one is left")
	}
	for i := range maxMarks + 3 {
		if kept := m.add(int64(100+i), int64(i), 0); kept != (i < maxMarks) {
			t.Fatalf("mark %d kept %v", i, kept)
		}
	}
	if len(m.list) != maxMarks || m.list[maxMarks-1].end != 100+maxMarks-1 {
		t.Fatalf("kept %d marks, want the first %d", len(m.list), maxMarks)
	}
}
