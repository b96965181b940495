//go:build linux

package rxstamp

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"syscall"

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
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return c
	}
	return &Conn{Conn: tc, rx: receiver{raw: raw}}
}

// receiver reads with recvmsg to get the stamp as control data. One
// goroutine reads a connection at a time (net/http's reader, or TLS under
// it), so the control buffer is not shared.
type receiver struct {
	raw syscall.RawConn
	oob [64]byte // one cmsghdr and a timespec, with room to spare
}

// Read reads like net.TCPConn does, through the runtime's poller (deadlines
// hold), keeping the stamp of the newest packet the read consumed.
func (c *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n, oobn int
	var rerr error
	err := c.rx.raw.Read(func(fd uintptr) bool {
		for {
			n, oobn, _, _, rerr = unix.Recvmsg(int(fd), p, c.rx.oob[:], 0)
			if rerr != unix.EINTR { //nolint:errorlint // a raw errno
				break
			}
		}
		return rerr != unix.EAGAIN //nolint:errorlint // a raw errno; false waits for the poller
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		n = max(n, 0)
		var errno unix.Errno
		if errors.As(err, &errno) {
			err = os.NewSyscallError("recvmsg", errno)
		}
		return n, &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
	}
	if n == 0 {
		return 0, io.EOF
	}
	if ns, ok := stamp(c.rx.oob[:oobn]); ok {
		c.last.Store(ns)
	}
	return n, nil
}

// stamp finds the SCM_TIMESTAMPNS message in a recvmsg's control data and
// returns its wall-clock nanoseconds, without the allocations of
// syscall.ParseSocketControlMessage (this runs on every read).
func stamp(oob []byte) (int64, bool) {
	const hdr = unix.SizeofCmsghdr
	for len(oob) >= hdr {
		level := int32(binary.NativeEndian.Uint32(oob[hdr-8:]))
		typ := int32(binary.NativeEndian.Uint32(oob[hdr-4:]))
		length := cmsgLen(oob)
		if length < hdr || length > len(oob) {
			return 0, false
		}
		data := oob[unix.CmsgLen(0):length]
		if level == unix.SOL_SOCKET && typ == unix.SCM_TIMESTAMPNS {
			switch len(data) {
			case 16: // 64-bit time_t and long
				return int64(binary.NativeEndian.Uint64(data))*1e9 + int64(binary.NativeEndian.Uint64(data[8:])), true
			case 8: // 32-bit platforms
				return int64(int32(binary.NativeEndian.Uint32(data)))*1e9 + int64(int32(binary.NativeEndian.Uint32(data[4:]))), true
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
		return int(binary.NativeEndian.Uint64(oob))
	}
	return int(binary.NativeEndian.Uint32(oob))
}
