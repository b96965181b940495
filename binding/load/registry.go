package load

import "sync"

// registry is every one of a kind the process's scripts made (schedules,
// capacity searches, precision gates): made in VUs' init code, read by
// every finished call and by the report, so adding and reading hold a lock,
// and a reader walks a copy that a late add cannot change under it. The
// zero value is empty and ready.
type registry[T any] struct {
	mu   sync.Mutex
	list []T
}

func (r *registry[T]) add(v T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, v)
}

// all is a copy of the list as it is now.
func (r *registry[T]) all() []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]T(nil), r.list...)
}

// first is the first one made, if any: the one the report reads.
func (r *registry[T]) first() (T, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.list) == 0 {
		var zero T
		return zero, false
	}
	return r.list[0], true
}
