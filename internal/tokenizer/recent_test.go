package tokenizer

import (
	"strings"
	"sync"
	"testing"
)

// Recent counts what the tokenizer counts, for a text seen again, a new
// one, a long one, and from many goroutines at once.
func TestRecentCountsAsTheTokenizer(t *testing.T) {
	tk, err := Get(Default)
	if err != nil {
		t.Fatal(err)
	}
	r := NewRecent(tk)
	texts := []string{"Hello", "Hello", " world, again", "Hello", "", strings.Repeat("long text ", 100), "Hello"}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				for _, s := range texts {
					if got, want := r.Count(s), tk.Count(s); got != want {
						t.Errorf("Count(%.20q) = %d, the tokenizer's is %d", s, got, want)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}
