//go:build !linux

package llmstream

import (
	"net"
	"testing"
)

// isBlocking is only asked on Linux.
func isBlocking(*testing.T, net.Conn) bool { return false }
