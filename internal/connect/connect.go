// Package connect has a TCP connect wait for its handshake in the system
// call, for a short while, instead of in Go's network poller.
//
// Go dials without blocking: connect returns at once and the dialing
// goroutine parks until the poller reports the socket writable. The runtime
// looks at the poller when a CPU runs out of work, or every 10 ms at most.
// When a load test starts, every VU runs its first iteration at once and
// neither CPU of a small load generator runs out of work: connects that take
// the kernel microseconds are seen milliseconds later, in batches, and the
// wait goes into those calls' TTFT. A connect that waits in the
// system call returns as the handshake completes; its goroutine goes on on
// its own thread, or from the run queue, which the scheduler looks at long
// before the poller.
//
// The socket is blocking during the connect only, with a send timeout (which
// Linux applies to connect) of maxWait or until the dial's deadline: a
// handshake slower than that goes on in the poller as before (connect then
// returns EINPROGRESS), so a dial is never cancelled later than maxWait after
// its context. A waiting connect holds an OS thread, which the runtime keeps
// afterwards, so at most maxWaiting wait at once; other dials go Go's way.
// Elsewhere than on Linux every dial goes Go's way.
package connect

import (
	"context"
	"net"
	"syscall"
	"time"
)

// maxWait bounds how long a connect waits in its system call: past the poller's
// own 10 ms, covering the round trip to a server in the same region; a
// farther one is waited for in the poller, as Go does.
const maxWait = 25 * time.Millisecond

// maxWaiting bounds the connects waiting in their system call at once, and
// so the OS threads they hold.
const maxWaiting = 64

// slots holds a token per connect waiting in its system call.
var slots = make(chan struct{}, maxWaiting) //nolint:gochecknoglobals // the threads they bound are the process's

// Acquire takes a slot for a connect that waits in its system call; ok is
// false when all are taken (or off Linux), and the dial then goes Go's way.
// release gives the slot back once the dial has returned.
func Acquire() (release func(), ok bool) {
	if !supported {
		return nil, false
	}
	select {
	case slots <- struct{}{}:
		return func() { <-slots }, true
	default:
		return nil, false
	}
}

// InSyscall returns a copy of d whose TCP connects wait in their system call.
// Its Control or ControlContext, if any, still runs first. A connection it
// dials must go through Done before anything reads or writes it, and the dial
// must hold a slot (Acquire) while it runs.
func InSyscall(d net.Dialer) net.Dialer {
	base, baseCtx := d.Control, d.ControlContext
	d.Control = nil
	d.ControlContext = func(ctx context.Context, network, address string, c syscall.RawConn) error {
		var err error
		switch {
		case baseCtx != nil:
			err = baseCtx(ctx, network, address, c)
		case base != nil:
			err = base(network, address, c)
		}
		if err != nil {
			return err
		}
		wait := maxWait
		if dl, ok := ctx.Deadline(); ok {
			wait = min(wait, time.Until(dl))
		}
		if wait >= time.Millisecond && ctx.Err() == nil && isTCP(network) {
			block(c, wait)
		}
		return nil
	}
	return d
}

// Done makes the socket of a connection a dialer from InSyscall made
// nonblocking again, as Go's reads and writes expect: a blocking read would
// hold a thread until data came, whatever the deadline.
func Done(c net.Conn) error {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil // not a socket: nothing was made blocking
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return err
	}
	return unblock(raw)
}

func isTCP(network string) bool {
	return network == "tcp" || network == "tcp4" || network == "tcp6"
}
