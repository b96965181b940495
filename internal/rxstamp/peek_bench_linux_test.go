//go:build linux

package rxstamp

import (
	"bytes"
	"strconv"
	"testing"
	"time"
)

// BenchmarkPeek is one look at a held socket with size bytes waiting: what
// the watcher pays for each arrival it marks, once per call at least (its
// first token).
func BenchmarkPeek(b *testing.B) {
	for _, size := range []int{1 << 10, 8 << 10} {
		b.Run(byteSize(size), func(b *testing.B) {
			c, srv := pair(b)
			w := newWatcher(-1)
			if _, err := srv.Write(bytes.Repeat([]byte{'x'}, size)); err != nil {
				b.Fatal(err)
			}
			waitForBytes(b, c, w, size)
			b.ReportAllocs()
			for b.Loop() {
				if err := c.raw.Control(w.peekFd); err != nil || !w.peeked.ok || w.peeked.n != size {
					b.Fatalf("peek saw %d bytes (ok %v, %v), want %d", w.peeked.n, w.peeked.ok, err, size)
				}
			}
		})
	}
}

func byteSize(n int) string {
	if n >= 1<<10 {
		return strconv.Itoa(n>>10) + "KiB"
	}
	return strconv.Itoa(n) + "B"
}

// waitForBytes waits until w's peek sees want bytes waiting on c.
func waitForBytes(t testing.TB, c *Conn, w *watcher, want int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; {
		if err := c.raw.Control(w.peekFd); err != nil {
			t.Fatal(err)
		}
		if w.peeked.n >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d bytes came in 5 s", w.peeked.n, want)
		}
		time.Sleep(time.Millisecond)
	}
}

// A peek counts the bytes waiting, up to peekMax, dates them by the newest
// packet's stamp, and leaves them for the reader.
func TestPeekCountsAndDatesWaitingBytes(t *testing.T) {
	c, srv := pair(t)
	waitForStamps(t, c, srv)
	w := newWatcher(-1)
	if err := c.raw.Control(w.peekFd); err != nil || !w.peeked.ok || w.peeked.n != 0 {
		t.Fatalf("a peek at an empty socket saw %d bytes (ok %v, %v)", w.peeked.n, w.peeked.ok, err)
	}
	before := time.Now().UnixNano()
	first := bytes.Repeat([]byte{'a'}, 3000)
	if _, err := srv.Write(first); err != nil {
		t.Fatal(err)
	}
	waitForBytes(t, c, w, len(first))
	if !w.peeked.ok || w.peeked.n != len(first) {
		t.Fatalf("peek saw %d bytes (ok %v), want %d", w.peeked.n, w.peeked.ok, len(first))
	}
	if ns := w.peeked.ns; ns < before-int64(time.Second) || ns > time.Now().UnixNano() {
		t.Fatalf("peek stamped the bytes %s from the write", time.Duration(ns-before))
	}
	rest := bytes.Repeat([]byte{'b'}, peekMax)
	if _, err := srv.Write(rest); err != nil {
		t.Fatal(err)
	}
	waitForBytes(t, c, w, peekMax)
	if w.peeked.n != peekMax {
		t.Fatalf("peek saw %d bytes, want at most peekMax (%d)", w.peeked.n, peekMax)
	}
	got := make([]byte, 0, len(first)+len(rest))
	buf := make([]byte, 4096)
	for len(got) < cap(got) {
		n, err := c.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, buf[:n]...)
	}
	if !bytes.Equal(got, append(first, rest...)) {
		t.Fatal("the reader did not get the bytes the peeks saw, in order")
	}
}
