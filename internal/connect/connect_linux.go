package connect

import (
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

const supported = true

// block makes the socket blocking with a send timeout of wait, which bounds
// its connect. Failing that, it stays as Go made it and the connect goes
// Go's way: never a blocking connect without a bound.
func block(c syscall.RawConn, wait time.Duration) {
	_ = c.Control(func(fd uintptr) {
		tv := unix.NsecToTimeval(wait.Nanoseconds())
		if unix.SetsockoptTimeval(int(fd), unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv) == nil {
			_ = unix.SetNonblock(int(fd), false)
		}
	})
}

// unblock makes the socket nonblocking again. Its send timeout stays: it
// bounds blocking sends only, and the socket no longer blocks.
func unblock(c syscall.RawConn) error {
	var err error
	if cerr := c.Control(func(fd uintptr) { err = unix.SetNonblock(int(fd), true) }); cerr != nil {
		return cerr
	}
	return err
}

// Blocking tells whether c's socket is in blocking mode, as a connection from
// a dialer of InSyscall is until Done.
func Blocking(c syscall.Conn) (bool, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return false, err
	}
	var flags int
	if cerr := raw.Control(func(fd uintptr) { flags, err = unix.FcntlInt(fd, unix.F_GETFL, 0) }); cerr != nil {
		return false, cerr
	}
	return err == nil && flags&unix.O_NONBLOCK == 0, err
}
