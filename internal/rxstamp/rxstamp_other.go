//go:build !linux

package rxstamp

import "net"

// Wrap returns c as it is: receive stamps are read on Linux only.
func Wrap(c net.Conn) net.Conn { return c }

type (
	receiver struct{}
	watcher  struct{}
)

// Hold does nothing: receive stamps are read on Linux only.
func (c *Conn) Hold() {}

// Release does nothing: receive stamps are read on Linux only.
func (c *Conn) Release() {}

// Prime does nothing: receive stamps are read on Linux only.
func Prime() {}
