package dataset

import (
	"fmt"
	"sync"
)

// Store keeps one copy per process of everything built from the same source
// and options, however many VUs ask for it (k6 initialises VUs in parallel,
// each running the script's init code). A failed build is remembered too:
// every VU gets the same error instead of re-reading a bad file.
type Store struct {
	mu      sync.Mutex
	entries map[string]*storeEntry
}

type storeEntry struct {
	once sync.Once
	v    any
	err  error
}

// NewStore returns an empty store.
func NewStore() *Store { return &Store{entries: map[string]*storeEntry{}} }

// Shared returns the value built for key, building it on first use. Builds
// of different keys run concurrently; callers of one key wait for its build.
func Shared[T any](s *Store, key string, build func() (T, error)) (T, error) {
	s.mu.Lock()
	e, ok := s.entries[key]
	if !ok {
		e = &storeEntry{}
		s.entries[key] = e
	}
	s.mu.Unlock()
	e.once.Do(func() {
		e.v, e.err = build()
	})
	if e.err != nil {
		var zero T
		return zero, e.err
	}
	v, ok := e.v.(T)
	if !ok {
		var zero T
		return zero, fmt.Errorf("store key %q holds a %T, not the requested type", key, e.v)
	}
	return v, nil
}

// Len is the number of keys built or being built.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}
