//go:build linux

package rxstamp

import (
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// peekEvery is how often the watcher looks at held connections. It must be
// well under a decode step (10–50 ms for the models we test), the time in
// which the next token comes and merges with the first in the socket, and the
// watcher is late too when the process is, so the tick leaves room for
// that lateness inside a decode step.
const peekEvery = time.Millisecond

// peekMax bounds a peek: more bytes than this waiting are read as they come.
const peekMax = 16 << 10

// lookLateAfter is how long after the latest look a reader looks in the
// watcher's stead (lookIfLate): its own goroutine is then waiting behind
// others for a processor.
const lookLateAfter = 2 * peekEvery

// watcher keeps the segments of held connections apart for a late reader.
// A reader waiting in the runtime's poller learns that its socket is
// readable when a processor next polls the network: while every processor has
// goroutines to run (a wave of calls ending and starting at once) that may be
// only the runtime's monitor, every 10 ms. By then the next token may have
// come, the kernel has merged the two segments under the later one's stamp,
// and one read returns both with it. The watcher keeps the held sockets in
// its own edge-triggered epoll set, looks every peekEvery at those that got
// bytes (run), and peeks at them: how far the waiting bytes go and the newest
// stamp among them (marks). The reader, when it comes, reads up to each mark
// in turn and dates those bytes by the mark's stamp.
//
// Each look also bounds when the bytes it marks came: after the look before
// (they were not there then), so a mark says both "by its stamp" and "after
// since". A watcher that looked on time thus shows that two tokens in one
// mark came within a millisecond or two of each other: the server sent them
// together, the reader was not late for the first (Window).
//
// The watcher's goroutine is woken by a timer into the front of its
// processor's queue, but every goroutine readied after it there (a channel
// hand-off; in a wave, hundreds) pushes it to the back, for longer than a
// decode step, and first tokens merge with their second. Readers keep
// running meanwhile, so each read first looks in
// the watcher's stead when its look is late (lookIfLate): whichever of them
// runs does it.
type watcher struct {
	epfd  int
	mu    sync.Mutex
	conns map[int32]*Conn // connections in the epoll set, by file descriptor
	held  atomic.Int32    // how many of them are held: the loop looks while any is
	wake  chan struct{}   // the first hold starts the loop again
	// lookDone is the wall-clock ns at which the latest finished look
	// began: every byte that came on a watched connection before it is
	// marked or read, unless the connection fell behind (Conn.behind).
	lookDone atomic.Int64
	// lookAt is when the latest look began, finished or not.
	lookAt atomic.Int64

	// lookMu is held by whoever looks, the watcher's goroutine or a reader
	// in its stead; it owns the buffers below.
	lookMu sync.Mutex
	events []unix.EpollEvent
	msg    unix.Msghdr
	iov    unix.Iovec
	seen   [peekMax]byte // the peek's length (peekMax); MSG_TRUNC leaves it unwritten
	oob    [64]byte
	// peekFd is peek as the function a RawConn's Control takes, bound once
	// (a closure per peek would be an allocation per look at a socket);
	// peeked is what it saw.
	peekFd func(fd uintptr)
	peeked struct {
		n  int
		ns int64
		ok bool
	}
}

//nolint:gochecknoglobals // one watcher per process, made on the first hold
var (
	watcherOnce sync.Once
	// theWatcher is the process's watcher once made, for the reads that
	// look in its stead (any connection's).
	theWatcher atomic.Pointer[watcher]
)

// sharedWatcher is the process's watcher, or nil where epoll cannot be had
// (a held connection then reads as any other).
func sharedWatcher() *watcher {
	watcherOnce.Do(func() {
		fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if err != nil {
			return
		}
		w := newWatcher(fd)
		go w.run()
		theWatcher.Store(w)
	})
	return theWatcher.Load()
}

// lookIfLate looks now if the process's watcher has not for lookLateAfter
// while connections are held: a read calls it before its own. One reader
// looks at a time; the others go on with their reads.
func lookIfLate() {
	w := theWatcher.Load()
	if w == nil || w.held.Load() == 0 || time.Now().UnixNano()-w.lookAt.Load() < int64(lookLateAfter) {
		return
	}
	if !w.lookMu.TryLock() {
		return
	}
	defer w.lookMu.Unlock()
	if time.Now().UnixNano()-w.lookAt.Load() >= int64(lookLateAfter) { // nobody looked meanwhile
		w.lookNow()
	}
}

// newWatcher is a watcher of the epoll set epfd, not yet looking.
func newWatcher(epfd int) *watcher {
	w := &watcher{epfd: epfd, conns: map[int32]*Conn{}, wake: make(chan struct{}, 1), events: make([]unix.EpollEvent, 256)}
	w.iov.Base = &w.seen[0]
	w.iov.SetLen(len(w.seen))
	w.peekFd = func(fd uintptr) { w.peeked.n, w.peeked.ns, w.peeked.ok = w.peek(fd) }
	return w
}

// join puts c, whose socket is fd, in the epoll set for the connection's
// life (leave takes it out); false when it cannot be watched. A connection
// carries call after call: joining once instead of at every hold spares
// each call two epoll_ctl system calls, and the set reports a connection
// nobody holds for nothing (look skips it), as bytes come only to a request.
func (w *watcher) join(c *Conn, fd uintptr) bool {
	// In the map first: the first event may come before EpollCtl returns.
	w.mu.Lock()
	w.conns[c.fd] = c
	w.mu.Unlock()
	// Edge-triggered: reported once per arrival, not at every look while
	// the reader is away (hundreds of late readers would otherwise keep the
	// watcher busy asking about bytes it marked).
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLET, Fd: int32(fd)} // #nosec G115 -- a file descriptor fits
	if unix.EpollCtl(w.epfd, unix.EPOLL_CTL_ADD, int(fd), &ev) != nil {
		w.mu.Lock()
		delete(w.conns, c.fd)
		w.mu.Unlock()
		return false
	}
	return true
}

// leave takes c out of the epoll set (a closed socket has left it already)
// and out of the map, before its descriptor can be reused.
func (w *watcher) leave(c *Conn) {
	_ = c.raw.Control(func(fd uintptr) { _ = unix.EpollCtl(w.epfd, unix.EPOLL_CTL_DEL, int(fd), nil) })
	w.mu.Lock()
	if w.conns[c.fd] == c {
		delete(w.conns, c.fd)
	}
	w.mu.Unlock()
}

// hold has the watcher look at c (joined) until release.
func (w *watcher) hold(c *Conn) {
	// What an earlier hold left unmarked was read since; what is asked for
	// now comes after this.
	c.behind.Store(0)
	c.heldAt.Store(time.Now().UnixNano())
	c.held.Store(true)
	w.held.Add(1)
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// release undoes hold.
func (w *watcher) release(c *Conn) {
	c.held.Store(false)
	w.held.Add(-1)
}

// run looks at the held sockets every peekEvery, woken by a timer: a
// processor runs the goroutine a timer wakes next, at its next scheduling
// point, where one woken from the network or from a system call may wait
// behind the goroutines that hand each other the processor in a wave (so a
// watcher that waited in epoll_wait would be as late as no watcher at all).
func (w *watcher) run() {
	for {
		if w.held.Load() == 0 {
			<-w.wake
			continue
		}
		w.lookMu.Lock()
		w.lookNow()
		w.lookMu.Unlock()
		time.Sleep(peekEvery)
	}
}

// lookNow looks, with lookMu held.
func (w *watcher) lookNow() {
	if at, ok := w.look(); ok {
		w.lookDone.Store(at)
	}
}

// look peeks at every held socket that got bytes since the last look, and
// returns when it began; false when it was cut short (the look after then
// bounds its bytes by the look before).
func (w *watcher) look() (int64, bool) {
	at, prev := time.Now().UnixNano(), w.lookDone.Load()
	w.lookAt.Store(at)
	events := w.events
	for {
		n, err := unix.EpollWait(w.epfd, events, 0)
		if err != nil {
			return 0, false
		}
		for _, ev := range events[:n] {
			w.mu.Lock()
			c := w.conns[ev.Fd]
			w.mu.Unlock()
			if c != nil && c.held.Load() {
				w.peekHead(c, prev)
			}
		}
		if n < len(events) { // more ready sockets than events: ask again
			return at, true
		}
	}
}

// peekHead marks how far the bytes waiting in c's socket go, and the
// newest stamp among them: more came since the look before, prev (the set is
// edge-triggered). A read that ran meanwhile (the count moved) makes it drop
// what it saw; c is then behind: the bytes left came after prev, no later
// look can say more.
func (w *watcher) peekHead(c *Conn, prev int64) {
	since := c.after(prev)
	v := c.reads.Load()
	if v&1 == 1 { // a read is in recvmsg: what it leaves is for the next look
		c.fallBehind(since)
		return
	}
	off := c.consumed.Load()
	w.peeked.ok = false
	if c.raw.Control(w.peekFd) != nil || !w.peeked.ok || c.reads.Load() != v {
		c.fallBehind(since)
		return
	}
	n, ns := w.peeked.n, w.peeked.ns
	if n > 0 && (!c.marks.add(off+int64(n), ns, since) || n == peekMax) {
		c.fallBehind(since) // bytes beyond the marks, or beyond the peek
		return
	}
	c.behind.Store(0)
}

// fallBehind notes that bytes that came after since may be waiting unmarked.
func (c *Conn) fallBehind(since int64) { c.behind.CompareAndSwap(0, since) }

// peek reads the newest stamp among the bytes waiting in the socket (up to
// peekMax) without taking them, and how many there were; false when bytes
// may be waiting that it could not date.
func (w *watcher) peek(fd uintptr) (int, int64, bool) {
	w.msg.Iov, w.msg.Iovlen = &w.iov, 1
	w.msg.Control = &w.oob[0]
	w.msg.SetControllen(len(w.oob))
	for {
		// MSG_TRUNC: TCP counts the bytes and stamps them without copying
		// them into seen (only the count and the stamp are kept).
		n, _, e := unix.Syscall(unix.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&w.msg)), unix.MSG_PEEK|unix.MSG_DONTWAIT|unix.MSG_TRUNC) // #nosec G103 -- recvmsg(2) takes the msghdr by address
		switch {
		case e == unix.EINTR:
			continue
		case e == unix.EAGAIN || (e == 0 && n == 0): // nothing waiting, or the end
			return 0, 0, true
		case e != 0:
			return 0, 0, false
		}
		ns, ok := stamp(w.oob[:w.msg.Controllen])
		return int(n), ns, ok
	}
}

// Hold has the watcher look after the connection until Release: a read that
// comes late then still returns the bytes of each look apart, each with its
// own stamp, and Window bounds when they came. Hold before asking for the
// bytes to keep apart: bytes that waited unread since before it are taken as
// come after it. Holds count: HTTP/2 streams share a connection.
func (c *Conn) Hold() {
	c.holdMu.Lock()
	defer c.holdMu.Unlock()
	c.holds++
	if c.holds > 1 || c.closed { // the first hold watches; Close unwatched
		return
	}
	w := c.watched.Load()
	if w == nil { // the connection's first hold: it joins the set
		if w = sharedWatcher(); w == nil {
			return
		}
		var ok bool
		if c.raw.Control(func(fd uintptr) { ok = w.join(c, fd) }) != nil || !ok {
			return
		}
		c.watched.Store(w)
	}
	w.hold(c)
}

// Release ends one Hold.
func (c *Conn) Release() {
	c.holdMu.Lock()
	defer c.holdMu.Unlock()
	if c.holds == 0 {
		return
	}
	c.holds--
	if c.holds == 0 && c.held.Load() {
		c.watched.Load().release(c)
	}
}

// unwatch takes c out of the watcher's set for good; holdMu is held.
func (c *Conn) unwatch() {
	w := c.watched.Swap(nil)
	if w == nil {
		return
	}
	if c.held.Load() {
		w.release(c)
	}
	w.leave(c)
}

// settled is a time before which every byte that came on c is read or
// marked, or 0 when c is not watched.
func (c *Conn) settled() int64 {
	w := c.watched.Load()
	if w == nil || !c.held.Load() {
		return 0
	}
	// lookDone before behind: a look that let c fall behind stored it
	// first.
	return c.after(w.lookDone.Load())
}

// after is when the bytes waiting unmarked on c came after, the watcher's
// look before being at prev: then, or when c fell behind; and not before the
// hold (its bytes were not asked for yet: the watcher, idle before it, may
// not have looked for a while).
func (c *Conn) after(prev int64) int64 {
	if b := c.behind.Load(); b != 0 {
		prev = b
	}
	return max(prev, c.heldAt.Load())
}

// Close leaves the watcher before the socket closes: its descriptor may be
// reused by the next connection.
func (c *Conn) Close() error {
	c.holdMu.Lock()
	c.closed = true
	c.unwatch()
	c.holdMu.Unlock()
	return c.Conn.Close()
}
