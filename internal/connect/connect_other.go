//go:build !linux

package connect

import (
	"syscall"
	"time"
)

// supported is false: off Linux every connect goes Go's way.
const supported = false

func block(syscall.RawConn, time.Duration) {}

func unblock(syscall.RawConn) error { return nil }

// Blocking is false: off Linux no socket is made blocking.
func Blocking(syscall.Conn) (bool, error) { return false, nil }
