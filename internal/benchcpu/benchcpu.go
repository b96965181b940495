// Package benchcpu reads the process's CPU time for benchmarks that report
// cpu-ns/op beside ns/op: on a shared machine an operation's wall time is
// mostly other processes' turns, its CPU time much less so.
package benchcpu

import (
	"syscall"
	"testing"
	"time"
)

// Process is the process's CPU time (user and system) so far. It counts
// every goroutine of the process (an in-process server too: the same share
// before and after a change).
func Process(tb testing.TB) time.Duration {
	tb.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
