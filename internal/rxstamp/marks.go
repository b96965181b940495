package rxstamp

import (
	"sync"
	"sync/atomic"
)

// maxMarks bounds the marks kept for a connection: a reader that many
// segments behind reads the rest as it finds them.
const maxMarks = 16

// mark says that the stream's bytes up to end (an offset from the
// connection's first byte) had all arrived by the stamp ns, and those beyond
// the previous mark after since (the watcher's look before: they were not
// there yet).
type mark struct{ end, ns, since int64 }

// marks are what the watcher saw of a connection's socket while its reader
// was away, oldest first: each time more bytes were waiting, how far they
// went and the newest stamp among them then. The kernel merges queued
// segments under the newest stamp, so once the reader comes these are the
// only record of when the earlier bytes came.
type marks struct {
	mu   sync.Mutex
	n    atomic.Int32 // len(list), read without the lock by every read
	list []mark
}

// add notes that the bytes up to end had arrived by ns, the new ones after
// since. A mark not beyond the last one says nothing new; one past maxMarks
// is dropped, and add returns false: those bytes are not marked.
func (m *marks) add(end, ns, since int64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.list) > 0 && end <= m.list[len(m.list)-1].end {
		return true
	}
	if len(m.list) == maxMarks {
		return false
	}
	m.list = append(m.list, mark{end, ns, since})
	m.n.Store(int32(len(m.list))) // #nosec G115 -- at most maxMarks
	return true
}

// next is the first mark ahead of off, the marks behind it forgotten; false
// when there is none.
func (m *marks) next(off int64) (mark, bool) {
	if m.n.Load() == 0 {
		return mark{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	i := 0
	for i < len(m.list) && m.list[i].end <= off {
		i++
	}
	if i > 0 {
		m.list = append(m.list[:0], m.list[i:]...)
		m.n.Store(int32(len(m.list))) // #nosec G115 -- at most maxMarks
	}
	if len(m.list) == 0 {
		return mark{}, false
	}
	return m.list[0], true
}
