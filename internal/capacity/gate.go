package capacity

import (
	"context"
	"sync"
)

// Gate is the closed model's load on one instance: at most its size of
// workers (k6 VUs) hold a slot at once, and the size follows the search's
// level. A worker takes a slot for each call and gives it back before its
// next one, so the calls in flight never exceed the level.
type Gate struct {
	mu      sync.Mutex
	size    int
	held    int
	changed chan struct{} // closed when a slot frees or the size changes
}

// NewGate returns a gate of size 0: nobody passes until Resize.
func NewGate() *Gate { return &Gate{changed: make(chan struct{})} }

// signal wakes every waiter (g.mu held).
func (g *Gate) signal() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// Resize sets how many slots there are. Holders past a smaller size keep
// theirs until they release it; nobody new passes until the held count is
// under the size.
func (g *Gate) Resize(n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.size = n
	g.signal()
}

// Acquire waits for a slot; false when ctx ended first.
func (g *Gate) Acquire(ctx context.Context) bool {
	for {
		g.mu.Lock()
		if g.held < g.size {
			g.held++
			g.mu.Unlock()
			return true
		}
		ch := g.changed
		g.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

// Release gives a slot back.
func (g *Gate) Release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held--
	g.signal()
}
