// Package rxstamp tells when the bytes a connection read arrived, by the
// kernel's clock rather than the reader's.
//
// A client takes an event's arrival time when its Read returns. Under load
// that is later than the arrival by however long the reading goroutine waited
// for a CPU: at hundreds of streams on a couple of cores, milliseconds, and
// the wait lands in every TTFT and token gap the client reports. On Linux the
// kernel stamps every received packet; a TCP socket with SO_TIMESTAMPNS hands
// the stamp of the latest packet a read consumed to recvmsg. A Conn keeps the
// stamp of its latest read, so a reader can date the bytes it just got by
// when they reached this machine, whatever its own scheduling did.
//
// The stamp of the latest read is an upper bound of the arrival of every byte
// a reader holds (buffered bytes came in that read or an earlier one) and a
// lower bound of time.Now(), so using it is never less accurate than the
// clock. Elsewhere (other systems, other connection types) Wrap returns the
// connection as it is and the clock is used.
//
// One read cannot tell its packets apart: segments that queued while the
// reader was away are merged by the kernel under the newest stamp. While a
// connection is held (Conn.Hold: a call until its first token) a watcher
// peeks at its socket as bytes come and marks how far the waiting bytes go
// and their stamp then; a late reader reads up to each mark in turn, so a
// first token that waited is not dated by the token after it.
package rxstamp

import (
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// maxDelay bounds the correction: a stamp older than this, or in the future,
// means the wall clock was stepped (NTP) between the packet and the read, and
// the reader's clock is used instead.
const maxDelay = 10 * time.Second

// Conn is a TCP connection whose reads keep the kernel's receive stamp.
type Conn struct {
	net.Conn
	last atomic.Int64 // wall-clock ns of the latest read's newest packet; 0 = none yet
	rx   *receiver    // the platform's recvmsg reader
	raw  syscall.RawConn
	fd   int32

	// What the watcher needs to know of the reads (Hold): reads counts
	// recvmsg calls twice, before and after, so it is odd while one runs;
	// consumed is the bytes read so far, moved before the second count.
	reads    atomic.Uint64
	consumed atomic.Int64
	marks    marks // where the watcher saw the stream stand, and when

	// since is the wall-clock ns after which the bytes of the latest read
	// came, 0 when not known (Window); behind is the look after which bytes
	// may wait unmarked, 0 when the watcher's last look saw them all;
	// heldAt is when the watcher took c (Hold).
	since, behind, heldAt atomic.Int64

	holdMu  sync.Mutex
	holds   int                     // Hold calls not released
	watched atomic.Pointer[watcher] // the watcher whose set c joined, until Close
	held    atomic.Bool             // the watcher looks at c (holds > 0)
	closed  bool
}

// Arrival is when the bytes of the latest read arrived, on now's clock: now
// moved back by how long ago the kernel stamped them. now is returned as it is
// when no read was stamped or the stamp is not believable.
func (c *Conn) Arrival(now time.Time) time.Time {
	ns := c.last.Load()
	if ns == 0 {
		return now
	}
	// Round(0) strips the monotonic reading: the delay is measured on the
	// wall clock, the kernel's, and then taken off now, keeping now's
	// monotonic reading for every duration the call computes from it.
	d := now.Round(0).Sub(time.Unix(0, ns))
	if d <= 0 || d > maxDelay {
		return now
	}
	return now.Add(-d)
}

// Window is how long before their stamp (Arrival) the bytes of the latest
// read may have come: they were not there at the watcher's look before. It
// is known for a read made while the connection was held, false otherwise.
// Bytes a reader found waiting together came within Window of each other: a
// narrow one says the sender sent them together, not that the reader was
// late for the first.
func (c *Conn) Window() (time.Duration, bool) {
	since, ns := c.since.Load(), c.last.Load()
	if since == 0 || ns == 0 {
		return 0, false
	}
	return time.Duration(max(ns-since, 0)), true
}
