package stream

import "testing"

// A buffer grown for a large event does not come back from the pool: every
// call starts with the 4 KB a fresh one has.
func TestReadBuffersKeepOnlyTheFirstSize(t *testing.T) {
	var p bufferPool
	p.pool.New = readBuffers.pool.New
	large, cut := make([]byte, 64<<10), make([]byte, sseStartBufSize)[:100]
	p.put(&large)
	p.put(&cut)
	for range 4 {
		if b := *p.get(); len(b) != sseStartBufSize || cap(b) != sseStartBufSize {
			t.Fatalf("got a buffer of len %d, cap %d; want %d", len(b), cap(b), sseStartBufSize)
		}
	}
}
