package calls

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/grafana/sobek"
	"github.com/mstoykov/k6-taskqueue-lib/taskqueue"

	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// Per-event callbacks (chat params onEvent): events reach JavaScript on the
// event loop, in order, already timestamped.

// eventQueue delivers events to a JS callback on the event loop, in order. The
// event was timestamped before it was queued, so callbacks never touch timing.
func (c *Client) eventQueue(fn sobek.Callable, lag *atomic.Int64) (func(stream.RawEvent), func()) {
	vu := c.env.VU
	tq := taskqueue.New(vu.RegisterCallback)
	var once sync.Once
	var t0 time.Time
	onEvent := func(ev stream.RawEvent) {
		if t0.IsZero() {
			t0 = ev.At
		}
		at := float64(ev.At.Sub(t0)) / float64(time.Millisecond)
		tq.Queue(func() error {
			if wait := int64(time.Since(ev.At)); wait > lag.Load() {
				lag.Store(wait) // only the event loop writes it
			}
			rt := vu.Runtime()
			obj := rt.NewObject()
			_ = obj.Set("type", ev.Type)
			_ = obj.Set("id", ev.ID)
			_ = obj.Set("data", ev.Data)
			_ = obj.Set("time", at)
			_, err := fn(sobek.Undefined(), obj)
			return err
		})
	}
	return onEvent, func() { once.Do(tq.Close) }
}
