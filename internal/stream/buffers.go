package stream

import "sync"

// readBuffers keeps the framers' read buffers from one call to the next: a
// call is short, so at hundreds of calls a second the 4 KB buffer each
// started with (and grew) was a steady share of the garbage that makes the
// readers late when it is collected. Buffers that grew past
// maxPooledReadBuffer for one large event are left to the collector.
var readBuffers = bufferPool{pool: sync.Pool{New: func() any { //nolint:gochecknoglobals // a pool shared by every call is the point
	b := make([]byte, sseStartBufSize)
	return &b
}}}

const maxPooledReadBuffer = 64 << 10

type bufferPool struct{ pool sync.Pool }

// get returns a buffer of at least sseStartBufSize bytes, its length its capacity.
func (p *bufferPool) get() []byte {
	b := *p.pool.Get().(*[]byte) //nolint:forcetypeassert // the pool holds only *[]byte
	return b[:cap(b)]
}

func (p *bufferPool) put(b []byte) {
	if cap(b) < sseStartBufSize || cap(b) > maxPooledReadBuffer {
		return
	}
	p.pool.Put(&b)
}
