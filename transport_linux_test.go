package llmstream

import (
	"net"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// isBlocking tells whether c's socket is in blocking mode.
func isBlocking(t *testing.T, c net.Conn) bool {
	t.Helper()
	raw, err := c.(syscall.Conn).SyscallConn() //nolint:forcetypeassert // a TCP connection
	require.NoError(t, err)
	var flags int
	require.NoError(t, raw.Control(func(fd uintptr) { flags, err = unix.FcntlInt(fd, unix.F_GETFL, 0) }))
	require.NoError(t, err)
	return flags&unix.O_NONBLOCK == 0
}
