//go:build linux

package rxstamp

import (
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// peekEvery is how often the watcher looks at held connections. It must be
// well under a decode step (10–50 ms for the models we test), the time in
// which the next token comes and merges with the first in the socket, and the
// watcher is late too when the process is: 4 ms read more first tokens late
// at 200 streams than 1 ms in make accuracy.
const peekEvery = time.Millisecond

// peekMax bounds a peek: more bytes than this waiting are read as they come.
const peekMax = 16 << 10

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
type watcher struct {
	epfd  int
	mu    sync.Mutex
	conns map[int32]*Conn // held connections, by file descriptor
	wake  chan struct{}   // the first hold starts the loop again

	// The peek's buffers, owned by the watcher's goroutine.
	msg  unix.Msghdr
	iov  unix.Iovec
	seen [peekMax]byte
	oob  [64]byte
}

//nolint:gochecknoglobals // one watcher per process, made on the first hold
var (
	watcherOnce sync.Once
	theWatcher  *watcher
)

// sharedWatcher is the process's watcher, or nil where epoll cannot be had
// (a held connection then reads as any other).
func sharedWatcher() *watcher {
	watcherOnce.Do(func() {
		fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if err != nil {
			return
		}
		w := &watcher{epfd: fd, conns: map[int32]*Conn{}, wake: make(chan struct{}, 1)}
		w.iov.Base = &w.seen[0]
		w.iov.SetLen(len(w.seen))
		go w.run()
		theWatcher = w
	})
	return theWatcher
}

// add watches c, whose socket is fd, until remove; false when it cannot be
// watched.
func (w *watcher) add(c *Conn, fd uintptr) bool {
	// In the map first: the first event may come before EpollCtl returns.
	w.mu.Lock()
	w.conns[c.fd] = c
	w.mu.Unlock()
	// Edge-triggered: reported once per arrival, not at every look while
	// the reader is away (hundreds of late readers would otherwise keep the
	// watcher busy asking about bytes it marked).
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLET, Fd: int32(fd)} //nolint:gosec // a file descriptor fits
	if unix.EpollCtl(w.epfd, unix.EPOLL_CTL_ADD, int(fd), &ev) != nil {
		w.mu.Lock()
		delete(w.conns, c.fd)
		w.mu.Unlock()
		return false
	}
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return true
}

// remove stops watching c; a closed socket has left the epoll set already.
func (w *watcher) remove(c *Conn) {
	w.mu.Lock()
	delete(w.conns, c.fd)
	w.mu.Unlock()
	_ = c.raw.Control(func(fd uintptr) { _ = unix.EpollCtl(w.epfd, unix.EPOLL_CTL_DEL, int(fd), nil) })
}

// run looks at the held sockets every peekEvery, woken by a timer: a
// processor runs the goroutine a timer wakes next, at its next scheduling
// point, where one woken from the network or from a system call may wait
// behind the goroutines that hand each other the processor in a wave (a
// version that waited in epoll_wait read a fifth of the first tokens late at
// 500 streams, as without a watcher).
func (w *watcher) run() {
	events := make([]unix.EpollEvent, 256)
	for {
		w.mu.Lock()
		idle := len(w.conns) == 0
		w.mu.Unlock()
		if idle {
			<-w.wake
			continue
		}
		n, err := unix.EpollWait(w.epfd, events, 0)
		if err == nil {
			for _, ev := range events[:n] {
				w.mu.Lock()
				c := w.conns[ev.Fd]
				w.mu.Unlock()
				if c != nil {
					w.peekHead(c)
				}
			}
		}
		time.Sleep(peekEvery)
	}
}

// peekHead marks how far the bytes waiting in c's socket go, and the
// newest stamp among them: more came since the last look (the set is
// edge-triggered). A read that ran meanwhile (the count moved) makes it drop
// what it saw.
func (w *watcher) peekHead(c *Conn) {
	v := c.reads.Load()
	if v&1 == 1 { // a read is in recvmsg: what it leaves is for the next look
		return
	}
	off := c.consumed.Load()
	var n int
	var ns int64
	if c.raw.Control(func(fd uintptr) { n, ns = w.peek(fd) }) != nil || n == 0 || c.reads.Load() != v {
		return
	}
	c.marks.add(off+int64(n), ns)
}

// peek reads the newest stamp among the bytes waiting in the socket (up to
// peekMax) without taking them, and how many there were.
func (w *watcher) peek(fd uintptr) (int, int64) {
	w.msg.Iov, w.msg.Iovlen = &w.iov, 1
	w.msg.Control = &w.oob[0]
	w.msg.SetControllen(len(w.oob))
	for {
		n, _, e := unix.Syscall(unix.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&w.msg)), unix.MSG_PEEK|unix.MSG_DONTWAIT)
		if e == unix.EINTR {
			continue
		}
		if e != 0 || n == 0 {
			return 0, 0
		}
		ns, ok := stamp(w.oob[:w.msg.Controllen])
		if !ok {
			return 0, 0
		}
		return int(n), ns
	}
}

// Hold has the watcher look after the connection until Release: a read that
// comes late then still returns the bytes of each look apart, each with its
// own stamp. Holds count: HTTP/2 streams share a connection.
func (c *Conn) Hold() {
	c.holdMu.Lock()
	defer c.holdMu.Unlock()
	c.holds++
	if c.holds > 1 || c.closed { // the first hold watches; Close unwatched
		return
	}
	w := sharedWatcher()
	if w == nil {
		return
	}
	var ok bool
	if c.raw.Control(func(fd uintptr) { ok = w.add(c, fd) }) == nil && ok {
		c.watched = w
	}
}

// Release ends one Hold.
func (c *Conn) Release() {
	c.holdMu.Lock()
	defer c.holdMu.Unlock()
	if c.holds == 0 {
		return
	}
	c.holds--
	if c.holds == 0 {
		c.unwatch()
	}
}

// unwatch takes c out of the watcher's set; holdMu is held.
func (c *Conn) unwatch() {
	if c.watched != nil {
		c.watched.remove(c)
		c.watched = nil
	}
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
