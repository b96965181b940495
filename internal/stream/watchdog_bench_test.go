package stream

import (
	"context"
	"testing"
	"time"
)

// BenchmarkWatchdog is the watchdog's share of one short call, per
// operation: the attempt's context and the watchdog armed and disarmed as
// Attempt.Run and the tap do for a 4-token answer on a reused connection
// (total, t0, a connection, the headers and three reads, the first output,
// the bounded drain, the end).
//
//	go test -run '^$' -bench Watchdog -benchmem ./internal/stream
func BenchmarkWatchdog(b *testing.B) {
	timeouts := Timeouts{Connect: 10 * time.Second, FirstToken: time.Minute, Idle: time.Minute, Total: 10 * time.Minute}
	b.ReportAllocs()
	for b.Loop() {
		ctx, cancel := context.WithCancelCause(context.Background())
		w := NewWatchdog(timeouts, cancel)
		w.Total()
		w.Start()
		w.ConnectStart()
		w.ConnectDone(true)
		for range 4 {
			w.Bytes()
		}
		w.FirstOutput()
		w.CutOff(time.Second)
		w.EndCutOff()
		w.Stop()
		cancel(nil)
		if ctx.Err() == nil {
			b.Fatal("not cancelled")
		}
	}
}
