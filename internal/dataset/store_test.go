package dataset

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

func TestStoreBuildsOncePerKey(t *testing.T) {
	s := NewStore()
	var builds atomic.Int32
	var wg sync.WaitGroup
	results := make([]*int, 64)
	for i := range results {
		wg.Go(func() {
			v, err := Shared(s, "k", func() (*int, error) {
				builds.Add(1)
				x := 42
				return &x, nil
			})
			if err != nil {
				t.Error(err)
			}
			results[i] = v
		})
	}
	wg.Wait()
	if builds.Load() != 1 {
		t.Fatalf("%d builds", builds.Load())
	}
	for _, r := range results {
		if r != results[0] {
			t.Fatal("callers got different copies")
		}
	}
	boom := errors.New("bad file")
	for range 2 {
		if _, err := Shared(s, "bad", func() (*int, error) { builds.Add(1); return nil, boom }); !errors.Is(err, boom) {
			t.Fatalf("error %v", err)
		}
	}
	if builds.Load() != 2 || s.Len() != 2 {
		t.Fatalf("builds %d, keys %d", builds.Load(), s.Len())
	}
	if _, err := Shared(s, "k", func() (string, error) { return "", nil }); err == nil {
		t.Fatal("type confusion not reported")
	}
}
