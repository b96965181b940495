//go:build linux

package rxstamp

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/llmstream/xk6-llmstream/internal/asplanned"
)

// pair is a loopback TCP connection: the client side wrapped, the server's plain.
func pair(t testing.TB) (*Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	srv := <-accepted
	if srv == nil {
		t.Fatal("accept failed")
	}
	w, ok := Wrap(c).(*Conn)
	if !ok {
		t.Fatal("a TCP connection on Linux is not wrapped")
	}
	t.Cleanup(func() { w.Close(); srv.Close() })
	return w, srv
}

// A reader that gets to its bytes late dates them when they arrived: the
// stamp is the kernel's, not the moment Read returned.
func TestArrivalIsWhenTheBytesCameNotWhenTheyWereRead(t *testing.T) {
	c, srv := pair(t)
	waitForStamps(t, c, srv)
	measureWithoutWallStep(t, func() string {
		sent := time.Now()
		if _, err := srv.Write([]byte("data: hello\n\n")); err != nil {
			t.Fatal(err)
		}
		const late = 80 * time.Millisecond
		time.Sleep(late) // the reader was not running when the bytes came
		buf := make([]byte, 64)
		n, err := c.Read(buf)
		now := time.Now()
		if err != nil || string(buf[:n]) != "data: hello\n\n" {
			t.Fatalf("read %q, %v", buf[:n], err)
		}
		at := c.Arrival(now)
		if lag := now.Sub(at); lag < late/2 {
			return fmt.Sprintf("arrival %s before the read's return; the bytes waited %s in the socket", lag, late)
		}
		if at.Before(sent.Add(-time.Millisecond)) {
			return fmt.Sprintf("arrival %s before the write", sent.Sub(at))
		}
		if at.After(now) {
			return "arrival after now"
		}
		// The monotonic reading survives: durations from it are on the same clock.
		if d := at.Sub(sent); d < 0 || d > late/2 {
			return fmt.Sprintf("write to arrival %s", d)
		}
		return ""
	})
}

// waitForStamps exchanges bytes until the kernel stamps them: the first
// socket to ask turns stamping on for the machine, and the kernel does that
// a moment later, so the first packets may come unstamped.
func waitForStamps(t *testing.T, c *Conn, srv net.Conn) {
	t.Helper()
	buf := make([]byte, 8)
	for deadline := time.Now().Add(5 * time.Second); c.last.Load() == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the kernel stamped no packet in 5 s")
		}
		if _, err := srv.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Read(buf); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestNoStampYetIsNow(t *testing.T) {
	c, _ := pair(t)
	now := time.Now()
	if got := c.Arrival(now); !got.Equal(now) {
		t.Fatalf("Arrival before any read = %v, want now", got)
	}
}

// Reads behave as net.TCPConn's: deadlines time out as net.Errors, the
// peer's close is io.EOF.
func TestReadsBehaveAsTCP(t *testing.T) {
	c, srv := pair(t)
	if err := c.SetReadDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	_, err := c.Read(make([]byte, 8))
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v", err)
	}
	_ = c.SetReadDeadline(time.Time{})
	srv.Close()
	if _, err := c.Read(make([]byte, 8)); !errors.Is(err, io.EOF) {
		t.Fatalf("read after the peer closed: %v", err)
	}
	c.Close()
	if _, err := c.Read(make([]byte, 8)); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read after close: %v", err)
	}
}

func TestOnlyTCPIsWrapped(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if Wrap(a) != a {
		t.Fatal("a pipe was wrapped")
	}
}

func TestStampRejectsMalformedControlData(t *testing.T) {
	for _, oob := range [][]byte{nil, make([]byte, 8), make([]byte, 16), {255, 255, 255, 255, 255, 255, 255, 255, 0, 0, 0, 0, 0, 0, 0, 0}} {
		if _, ok := stamp(oob); ok {
			t.Fatalf("stamp(%v) found a stamp", oob)
		}
	}
}

// A read allocates nothing: it runs for every event of every stream, and
// garbage is paid for by the readers when the collector runs.
func TestReadAllocatesNothing(t *testing.T) {
	c, srv := pair(t)
	waitForStamps(t, c, srv)
	msg, buf := []byte("data: x\n\n"), make([]byte, 64)
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := srv.Write(msg); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf[:len(msg)]); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per write and read", allocs)
	}
}

// After Prime, a new connection's very first packet is stamped: the kernel
// turns stamping on a moment after the first socket asks, so without it the
// first events of a test (many streams opening at once) would go unstamped.
// (Run alone, with no other stamping socket open, this fails without Prime.)
func TestPrimeStampsTheFirstPacket(t *testing.T) {
	Prime()
	time.Sleep(100 * time.Millisecond) // the kernel's deferred work
	c, srv := pair(t)
	if _, err := srv.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(make([]byte, 8)); err != nil {
		t.Fatal(err)
	}
	if c.last.Load() == 0 {
		t.Fatal("the first packet of a new connection was not stamped")
	}
}

// A held connection's late read keeps bytes that came apart apart: the
// watcher marked what waited each time more came, the reader reads up to each
// mark in turn, and each read has its own segment's stamp. Without the hold
// the late read takes them all under the latest stamp.
func TestHeldLateReadKeepsSegmentsApart(t *testing.T) {
	for _, held := range []bool{true, false} {
		c, srv := pair(t)
		waitForStamps(t, c, srv)
		measureWithoutWallStep(t, func() string { return lateReadOfSegments(t, c, srv, held) })
	}
}

// lateReadOfSegments writes three segments apart, reads them late, and says
// what it found wrong with the reads and their stamps.
func lateReadOfSegments(t *testing.T, c *Conn, srv net.Conn, held bool) string {
	const step = 40 * time.Millisecond
	segments := []string{"data: one\n\n", "data: two\n\n", "data: three\n\n"}
	if held {
		c.Hold()
		defer c.Release()
	}
	// Each stamp is checked against when its segment was written, not
	// when it was meant to be: a loaded machine oversleeps.
	sent := time.Now()
	written := make([]time.Duration, len(segments))
	for i, s := range segments {
		if i > 0 {
			time.Sleep(step)
		}
		written[i] = time.Since(sent)
		if _, err := srv.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(step) // the reader comes after all of them
	var got []string
	var stamps []time.Duration
	buf := make([]byte, 64)
	for len(strings.Join(got, "")) < len(strings.Join(segments, "")) {
		n, err := c.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(buf[:n]))
		stamps = append(stamps, c.Arrival(time.Now()).Sub(sent))
		// Held, the watcher looked every millisecond: each read's
		// bytes came in the last one before its stamp.
		if d, ok := c.Window(); ok != held || d > step/2 {
			return fmt.Sprintf("held %v: read %d has a window of %s (known %v)", held, len(got), d, ok)
		}
	}
	t.Logf("held %v: reads %q, stamps %v after the first write", held, got, stamps)
	want := segments
	if !held {
		want = []string{strings.Join(segments, "")}
	}
	if !slices.Equal(got, want) {
		return fmt.Sprintf("held %v: reads %q, want %q", held, got, want)
	}
	for i, d := range stamps {
		if sentAt := written[i+len(segments)-len(stamps)]; d < sentAt || d > sentAt+step/2 {
			return fmt.Sprintf("held %v: read %d stamped %s after the first write, its last segment was written at %s", held, i, d, sentAt)
		}
	}
	return ""
}

// When the watcher's goroutine does not get to run (a wave of goroutines
// queued ahead of it), the reads of other connections look in its stead, so a
// held connection's late read still keeps its segments apart. Here the
// watcher's goroutine never runs; without the other reads its segments merge
// under the second's stamp.
func TestReadsLookWhenTheWatcherIsLate(t *testing.T) {
	for _, othersRead := range []bool{true, false} {
		held, srv := pair(t)
		other, otherSrv := pair(t)
		waitForStamps(t, held, srv)
		waitForStamps(t, other, otherSrv)
		measureWithoutWallStep(t, func() string {
			return readWithALateWatcher(t, [2]*Conn{held, other}, [2]net.Conn{srv, otherSrv}, othersRead)
		})
	}
}

// readWithALateWatcher holds conns[0] in a watcher that never runs, writes
// it two segments apart (and, othersRead, conns[1] a byte read between
// them), reads late, and says what it found wrong with the reads and stamps.
func readWithALateWatcher(t *testing.T, conns [2]*Conn, srvs [2]net.Conn, othersRead bool) string {
	const step = 40 * time.Millisecond
	held, other := conns[0], conns[1]
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	w := newWatcher(fd) // never run: always late
	before := theWatcher.Swap(w)
	defer func() {
		w.release(held)
		w.leave(held)
		held.watched.Store(nil)
		theWatcher.Store(before)
		_ = unix.Close(fd)
	}()
	var joined bool
	if err := held.raw.Control(func(fd uintptr) { joined = w.join(held, fd) }); err != nil || !joined {
		t.Fatal("the test's watcher cannot watch the connection")
	}
	held.watched.Store(w)
	w.hold(held)

	// Each stamp is checked against when its segment was written, not
	// when it was meant to be: a loaded machine oversleeps.
	sent := time.Now()
	var written []time.Duration
	write := func(c net.Conn, s string) {
		if c == srvs[0] {
			written = append(written, time.Since(sent))
		}
		if _, err := c.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	write(srvs[0], "data: one\n\n")
	time.Sleep(step / 4)
	if othersRead {
		write(srvs[1], "x")
		if _, err := other.Read(make([]byte, 8)); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(step - step/4)
	write(srvs[0], "data: two\n\n")
	time.Sleep(step / 2) // the held connection's reader comes late

	var got []string
	var stamps []time.Duration
	buf := make([]byte, 64)
	for len(strings.Join(got, "")) < len("data: one\n\ndata: two\n\n") {
		n, err := held.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(buf[:n]))
		stamps = append(stamps, held.Arrival(time.Now()).Sub(sent))
	}
	t.Logf("others read %v: reads %q, stamps %v after the first write", othersRead, got, stamps)

	want, at := []string{"data: one\n\n", "data: two\n\n"}, written
	if !othersRead {
		want, at = []string{"data: one\n\ndata: two\n\n"}, written[1:]
	}
	if !slices.Equal(got, want) {
		return fmt.Sprintf("others read %v: reads %q, want %q", othersRead, got, want)
	}
	for i, d := range stamps {
		if d < at[i] || d > at[i]+step/4 {
			return fmt.Sprintf("others read %v: read %d stamped %s after the first write, its segment was written at %s", othersRead, i, d, at[i])
		}
	}
	return ""
}

// Holds count, and the watcher keeps a connection while any is left; a
// closed connection leaves it, whatever its holds.
func TestHoldsCountAndCloseLeaves(t *testing.T) {
	joined := func(c *Conn) bool {
		w := sharedWatcher()
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.conns[c.fd] == c
	}
	// Watched: in the set and looked at. A connection stays in the set
	// between holds (it joins once), and leaves it when closed.
	watched := func(c *Conn) bool { return joined(c) && c.held.Load() }
	c, _ := pair(t)
	c.Hold()
	c.Hold()
	c.Release()
	if !watched(c) {
		t.Fatal("one hold is left, and the connection is not watched")
	}
	c.Release()
	c.Release() // one too many: nothing happens
	if watched(c) {
		t.Fatal("no hold is left, and the connection is watched")
	}
	if !joined(c) {
		t.Fatal("released, and out of the set: the next hold would join it again")
	}
	c.Hold()
	if !watched(c) {
		t.Fatal("held again, and not watched")
	}
	c.Close()
	if joined(c) {
		t.Fatal("closed, and still in the set")
	}
	c.Release()
	c.Hold() // after Close: nothing to watch
	if watched(c) {
		t.Fatal("held after Close, and watched")
	}
}

// A read's Window says how long before its stamp its bytes may have come:
// since the watcher's look before them. Looks on time (here the test looks
// when it likes, as the watcher does every millisecond) keep it narrow,
// whether the reader comes after the watcher marked the bytes or before; a
// look that missed the first of two segments leaves it open as wide as the
// time between them, and a connection nobody watches has none.
func TestWindowIsTheTimeSinceTheLookBefore(t *testing.T) {
	c, srv := pair(t)
	waitForStamps(t, c, srv)
	if _, ok := c.Window(); ok {
		t.Fatal("a connection nobody watches has a window")
	}
	measureAsPlanned(t, func() (string, string) {
		c, srv := pair(t) // a fresh one: a failed attempt may leave bytes unread
		waitForStamps(t, c, srv)
		return windowsOfLooks(t, c, srv)
	})
}

// windowsOfLooks looks and writes on c as the watcher and a server would, and
// says how the test's own looks and writes strayed from the plan (a write
// right after the look before it; the segments meant to share one look a
// step apart, not more) and what it found wrong with the reads' windows.
func windowsOfLooks(t *testing.T, c *Conn, srv net.Conn) (offPlan, failure string) {
	const step = 40 * time.Millisecond
	w := newWatcher(-1) // no epoll set: the test says when it looks
	c.watched.Store(w)
	c.held.Store(true)
	defer func() { c.watched.Store(nil); c.held.Store(false) }()
	var plan asplanned.Plan
	var looked time.Time
	look := func() {
		looked = time.Now()
		w.peekHead(c, w.lookDone.Load())
		w.lookDone.Store(looked.UnixNano())
	}
	// write sends s; promptly: its bytes come at most slack after the look before.
	write := func(s string, slack time.Duration) {
		if _, err := srv.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
		plan.Within(fmt.Sprintf("writing %q after the look before", s), time.Since(looked), 0, slack)
		time.Sleep(2 * time.Millisecond) // on the loopback, there
	}
	read := func() (string, time.Duration) {
		buf := make([]byte, 64)
		n, err := c.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		d, ok := c.Window()
		if !ok {
			t.Fatalf("read %q of a watched connection has no window", buf[:n])
		}
		return string(buf[:n]), d
	}
	var found []string
	expect := func(what, want string, lo, hi time.Duration) {
		got, d := read()
		t.Logf("%s: read %q, window %s", what, got, d)
		if got != want || d < lo || d > hi {
			found = append(found, fmt.Sprintf("%s: read %q with a window of %s, want %q within [%s, %s]", what, got, d, want, lo, hi))
		}
	}
	onTime := step / 8 // half the bound the windows are held to
	look()
	write("one ", onTime)
	look()
	time.Sleep(step)
	look()
	write("two ", onTime)
	look()
	expect("marked, looked on time", "one ", 0, step/4)
	expect("marked, looked on time", "two ", 0, step/4)

	look()
	write("three ", onTime)
	expect("read before the watcher looked", "three ", 0, step/4)

	look()
	write("four ", onTime)
	time.Sleep(step)
	write("five ", step+step/2) // a step apart: the bound is two
	look()
	expect("one look for two segments", "four five ", step*3/4, step*2)
	return plan.Strays(), strings.Join(found, "; ")
}
