package stream

import "sync"

// readBuffers keeps the framers' read buffers from one call to the next: a
// call is short, so at hundreds of calls a second the 4 KB buffer each
// started with was a steady share of the garbage that makes the readers late
// when it is collected. Only buffers of that first size come back: one grown
// for a large event is left to the collector, so a call never starts with
// (and holds for its whole stream) more than a fresh one would, and the
// NDJSON scanner's buffer stays the 4 KB it always had.
var readBuffers = bufferPool{pool: sync.Pool{New: func() any { //nolint:gochecknoglobals // a pool shared by every call is the point
	b := make([]byte, sseStartBufSize)
	return &b
}}}

type bufferPool struct{ pool sync.Pool }

// get returns a buffer of sseStartBufSize bytes, for put once done: the
// pointer goes back as it came, as a new one would be an allocation per call.
func (p *bufferPool) get() *[]byte {
	return p.pool.Get().(*[]byte) //nolint:forcetypeassert // the pool holds only *[]byte
}

func (p *bufferPool) put(b *[]byte) {
	if cap(*b) != sseStartBufSize {
		return
	}
	*b = (*b)[:cap(*b)]
	p.pool.Put(b)
}
