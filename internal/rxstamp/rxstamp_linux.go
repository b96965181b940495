//go:build linux

package rxstamp

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Wrap turns on the kernel's receive stamps for a TCP connection and returns
// it wrapped; any other connection, or one the socket option cannot be set
// on, is returned as it is.
func Wrap(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	w := &Conn{Conn: tc, raw: raw}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		w.fd = int32(fd) // #nosec G115 -- a file descriptor fits
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return c
	}
	w.rx = newReceiver(w)
	return w
}

// Prime turns the kernel's receive stamping on for the machine now, and keeps
// it on for the life of the process, so the first connections' packets are
// stamped too. The kernel stamps packets once any socket asks for it, but it
// turns that on a moment after the first socket asks (deferred work) and off
// again when the last one closes: without a socket that stays, the first
// events of a test, when many streams open at once, would go unstamped.
// Prime opens one UDP socket with the option and never closes it (one file
// descriptor, no traffic). Errors leave the stamps to Wrap's connections.
func Prime() { primeOnce.Do(prime) }

var primeOnce sync.Once //nolint:gochecknoglobals // one socket per process

func prime() {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return
	}
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) != nil {
		_ = unix.Close(fd)
	}
}

// receiver reads with recvmsg to get the stamp as control data. One
// goroutine reads a connection at a time (net/http's reader, or TLS under
// it), so its message header and control buffer are not shared. Everything a
// read needs lives here, made once per connection: a read allocates nothing
// (unix.Recvmsg and a closure per read would, on every event of every
// stream, and the garbage collector's work lands on the readers).
type receiver struct {
	conn   *Conn
	want   int   // the caller's buffer length
	seenNs int64 // the watcher's stamp of the bytes this read was cut to; 0: none
	since  int64 // the bytes of this read came after it; 0: not known
	msg    unix.Msghdr
	iov    unix.Iovec
	oob    [64]byte // one cmsghdr and a timespec, with room to spare
	n      int
	err    error
	read   func(fd uintptr) bool // recv, bound once
}

func newReceiver(c *Conn) *receiver {
	r := &receiver{conn: c}
	r.read = r.recv
	return r
}

// recv is one recvmsg; false asks the poller to wait for the socket.
func (r *receiver) recv(fd uintptr) bool {
	c := r.conn
	for {
		c.reads.Add(1)
		// Bytes that came before the watcher's last look are marked: if
		// there is no mark ahead, what this read takes came after it.
		settled := c.settled()
		off := c.consumed.Load()
		r.iov.SetLen(r.want)
		r.seenNs, r.since = 0, settled
		if m, ok := c.marks.next(off); ok {
			// Take no more than the bytes the watcher saw waiting, and
			// date them by the stamp they had then: the kernel has merged
			// the segments that came since with them, under the newest
			// stamp.
			r.seenNs, r.since = m.ns, m.since
			if m.end-off < int64(r.want) {
				r.iov.SetLen(int(m.end - off))
			}
		}
		n, _, e := unix.Syscall(unix.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&r.msg)), 0) // #nosec G103 -- recvmsg(2) takes the msghdr by address
		if e == 0 {
			c.consumed.Add(int64(n)) // #nosec G115 -- bytes read by one recvmsg: at most the buffer
		}
		c.reads.Add(1)
		switch e {
		case 0:
			r.n, r.err = int(n), nil
			return true
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		default:
			r.n, r.err = 0, e
			return true
		}
	}
}

// Read reads like net.TCPConn does, through the runtime's poller (deadlines
// hold), keeping the stamp of the newest packet the read consumed.
func (c *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	lookIfLate() // before this read: the bytes waiting may be another stream's first token
	r := c.rx
	r.iov.Base = &p[0]
	r.want = len(p)
	r.msg.Iov, r.msg.Iovlen = &r.iov, 1
	r.msg.Control = &r.oob[0]
	r.msg.SetControllen(len(r.oob))
	err := c.raw.Read(r.read)
	r.iov.Base, r.msg.Iov = nil, nil // the buffer is the caller's again
	if err == nil {
		err = r.err
	}
	if err != nil {
		var errno unix.Errno
		if errors.As(err, &errno) {
			err = os.NewSyscallError("recvmsg", errno)
		}
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
	}
	if r.n == 0 {
		return 0, io.EOF
	}
	// A read without a stamp forgets the last one: it dated other bytes.
	ns, ok := stamp(r.oob[:r.msg.Controllen])
	if !ok {
		ns = 0
	}
	if r.seenNs != 0 && ns != 0 && r.seenNs < ns {
		ns = r.seenNs
	}
	c.last.Store(ns)
	c.since.Store(r.since)
	return r.n, nil
}

// stamp finds the SCM_TIMESTAMPNS message in a recvmsg's control data and
// returns its wall-clock nanoseconds, without the allocations of
// syscall.ParseSocketControlMessage (this runs on every read).
func stamp(oob []byte) (int64, bool) {
	const hdr = unix.SizeofCmsghdr
	for len(oob) >= hdr {
		level := int32(binary.NativeEndian.Uint32(oob[hdr-8:])) // #nosec G115 -- cmsg_level is a C int
		typ := int32(binary.NativeEndian.Uint32(oob[hdr-4:]))   // #nosec G115 -- cmsg_type is a C int
		length := cmsgLen(oob)
		if length < hdr || length > len(oob) {
			return 0, false
		}
		data := oob[unix.CmsgLen(0):length]
		if level == unix.SOL_SOCKET && typ == unix.SCM_TIMESTAMPNS {
			switch len(data) {
			case 16: // 64-bit time_t and long
				return int64(binary.NativeEndian.Uint64(data))*1e9 + int64(binary.NativeEndian.Uint64(data[8:])), true // #nosec G115 -- a timespec: signed 64-bit fields
			case 8: // 32-bit platforms
				return int64(int32(binary.NativeEndian.Uint32(data)))*1e9 + int64(int32(binary.NativeEndian.Uint32(data[4:]))), true // #nosec G115 -- a timespec: signed 32-bit fields
			}
			return 0, false
		}
		next := unix.CmsgSpace(length - unix.CmsgLen(0))
		if next > len(oob) {
			return 0, false
		}
		oob = oob[next:]
	}
	return 0, false
}

// cmsgLen reads cmsg_len, a size_t: 8 bytes on 64-bit platforms, 4 on 32-bit.
func cmsgLen(oob []byte) int {
	if unix.SizeofCmsghdr == 16 {
		return int(binary.NativeEndian.Uint64(oob)) // #nosec G115 -- a length past int fails the bounds check of the caller
	}
	return int(binary.NativeEndian.Uint32(oob))
}
