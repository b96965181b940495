package connect

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// socketState is how a socket is set when its connect runs.
type socketState struct {
	blocking bool
	sendWait time.Duration
}

// seen wraps d's ControlContext (the one InSyscall set) to note the socket's
// state just before the connect.
func seen(d *net.Dialer, got *socketState) {
	inner := d.ControlContext
	d.ControlContext = func(ctx context.Context, network, address string, c syscall.RawConn) error {
		if err := inner(ctx, network, address, c); err != nil {
			return err
		}
		return c.Control(func(fd uintptr) {
			flags, _ := unix.FcntlInt(fd, unix.F_GETFL, 0)
			tv, _ := unix.GetsockoptTimeval(int(fd), unix.SOL_SOCKET, unix.SO_SNDTIMEO)
			*got = socketState{blocking: flags&unix.O_NONBLOCK == 0, sendWait: time.Duration(tv.Nano())}
		})
	}
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func isBlocking(t *testing.T, c net.Conn) bool {
	t.Helper()
	blocking, err := Blocking(c.(syscall.Conn)) //nolint:forcetypeassert // a TCP connection
	require.NoError(t, err)
	return blocking
}

// The connect runs on a blocking socket bounded by a send timeout, and Done
// leaves a socket Go can read with deadlines.
func TestConnectWaitsInItsSystemCallThenTheSocketIsGos(t *testing.T) {
	t.Parallel()
	l := listen(t)
	d := InSyscall(net.Dialer{})
	var got socketState
	seen(&d, &got)
	c, err := d.DialContext(context.Background(), "tcp", l.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	require.True(t, got.blocking)
	// The kernel keeps the timeout in clock ticks (up to 10 ms), rounded up.
	require.GreaterOrEqual(t, got.sendWait, maxWait)
	require.Less(t, got.sendWait, maxWait+10*time.Millisecond)

	require.True(t, isBlocking(t, c), "blocking until Done")
	require.NoError(t, Done(c))
	require.False(t, isBlocking(t, c))
	// A blocking read would wait for data whatever the deadline.
	require.NoError(t, c.SetReadDeadline(time.Now().Add(20*time.Millisecond)))
	_, err = c.Read(make([]byte, 1))
	var ne net.Error
	require.ErrorAs(t, err, &ne)
	require.True(t, ne.Timeout(), "%v", err)
}

// The wait in the system call ends by the dial's deadline; a dial with no
// time left, or cancelled, or not over TCP, goes Go's way.
func TestConnectWaitIsBoundedByTheDeadline(t *testing.T) {
	t.Parallel()
	l := listen(t)
	d := InSyscall(net.Dialer{})
	var got socketState
	seen(&d, &got)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	c, err := d.DialContext(ctx, "tcp", l.Addr().String())
	if err == nil { // a 5 ms deadline is met on loopback, but a busy machine may miss it
		require.NoError(t, Done(c))
		require.NoError(t, c.Close())
	}
	require.True(t, got.blocking)
	require.Positive(t, got.sendWait)
	require.Less(t, got.sendWait, maxWait, "the deadline's 5 ms, in clock ticks")

	got = socketState{}
	ctx, cancel = context.WithTimeout(context.Background(), 500*time.Microsecond)
	defer cancel()
	c, err = d.DialContext(ctx, "tcp", l.Addr().String())
	if err == nil {
		require.NoError(t, c.Close())
	}
	require.Equal(t, socketState{}, got, "under a millisecond left: Go's way")
}

// A base dialer's Control still runs, first, and its error fails the dial.
func TestConnectKeepsTheBaseControl(t *testing.T) {
	t.Parallel()
	l := listen(t)
	refuse := errors.New("refused by the base control")
	ran := 0
	d := InSyscall(net.Dialer{Control: func(string, string, syscall.RawConn) error { ran++; return refuse }})
	_, err := d.DialContext(context.Background(), "tcp", l.Addr().String())
	require.ErrorIs(t, err, refuse)
	require.Equal(t, 1, ran)

	d = InSyscall(net.Dialer{ControlContext: func(context.Context, string, string, syscall.RawConn) error { ran++; return nil }})
	c, err := d.DialContext(context.Background(), "tcp", l.Addr().String())
	require.NoError(t, err)
	require.NoError(t, Done(c))
	require.NoError(t, c.Close())
	require.Equal(t, 2, ran)
}

// A handshake the server does not answer (its accept queue is full, so the
// kernel drops the SYN) goes on in the poller after maxWait, and the dial
// still ends at its deadline or when cancelled (as the watchdog's connect
// timeout does), not at the kernel's own connect timeout.
func TestUnansweredConnectEndsAtTheDeadline(t *testing.T) {
	t.Parallel()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = unix.Close(fd) })
	require.NoError(t, unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}))
	require.NoError(t, unix.Listen(fd, 0)) // one connection queued, never accepted
	sa, err := unix.Getsockname(fd)
	require.NoError(t, err)
	addr := (&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: sa.(*unix.SockaddrInet4).Port}).String() //nolint:forcetypeassert

	d := InSyscall(net.Dialer{})
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	deadline := 10 * maxWait
	failed := 0
	for range 6 { // the first fills the queue; the later ones wait
		cancelled := failed == 0 // one cancelled (as the connect timeout does), then one timed out
		// Timed from before the deadline's timer starts: it fires no
		// earlier than deadline after that, however late the dial began.
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		if cancelled {
			ctx, cancel = context.WithCancel(context.Background())
			time.AfterFunc(deadline, cancel)
		}
		c, err := d.DialContext(ctx, "tcp", addr)
		took := time.Since(start)
		cancel()
		if err == nil {
			conns = append(conns, c)
			continue
		}
		if cancelled {
			require.ErrorIs(t, err, context.Canceled)
		} else {
			var ne net.Error
			require.ErrorAs(t, err, &ne)
			require.True(t, ne.Timeout(), "%v", err)
		}
		require.GreaterOrEqual(t, took, deadline)
		require.Less(t, took, 5*time.Second, "the kernel's SYN retries would take minutes")
		if failed++; failed == 2 {
			return
		}
	}
	t.Fatal("every connect was answered: the accept queue did not fill")
}

// Slots run out at maxWaiting, and a released one is taken again.
func TestSlotsBoundTheWaitingConnects(t *testing.T) {
	// Not parallel: the slots are the process's.
	var releases []func()
	for range maxWaiting {
		release, ok := Acquire()
		require.True(t, ok)
		releases = append(releases, release)
	}
	_, ok := Acquire()
	require.False(t, ok, "all taken")
	releases[0]()
	release, ok := Acquire()
	require.True(t, ok)
	release()
	for _, r := range releases[1:] {
		r()
	}
}
