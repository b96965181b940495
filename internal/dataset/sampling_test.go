package dataset

import (
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/llmstream/xk6-llmstream/internal/tokenizer"
)

// 10 000 draws from 16 goroutines: each category's count is within one draw
// of its exact share (the schedule's guarantee for the whole sequence; the
// interleaving of goroutines does not matter because the draw number does).
func TestMixProportionsFromManyGoroutines(t *testing.T) {
	d, err := Synthetic(SyntheticOptions{Seed: 9, Variants: 2})
	if err != nil {
		t.Fatal(err)
	}
	const total, workers = 10_000, 16
	counts := make([]map[string]int, workers)
	var wg sync.WaitGroup
	for w := range workers {
		counts[w] = map[string]int{}
		wg.Go(func() {
			for range total / workers {
				counts[w][d.Next().Category]++
			}
		})
	}
	wg.Wait()
	sum := map[string]int{}
	for _, c := range counts {
		for k, v := range c {
			sum[k] += v
		}
	}
	want := map[string]float64{"short": 0.3, "medium": 0.5, "long_context": 0.1, "long_output": 0.1}
	for cat, share := range want {
		if dev := math.Abs(float64(sum[cat]) - share*total); dev > 1 {
			t.Errorf("%s: %d draws, want %.0f ± 1", cat, sum[cat], share*total)
		}
	}
	if d.Draws() != total {
		t.Errorf("draw counter %d, want %d", d.Draws(), total)
	}
}

// Within a category every item is drawn equally often.
func TestItemsDrawnInTurn(t *testing.T) {
	d, err := Synthetic(SyntheticOptions{Seed: 9, Variants: 7, Mix: map[string]float64{"short": 1, "medium": 2}})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for n := range uint64(3 * 7 * 10) {
		seen[d.Draw(n).ID]++
	}
	for id, c := range seen {
		want := 10 // short has weight 1
		if strings.HasPrefix(id, "medium") {
			want = 20
		}
		if c != want {
			t.Errorf("%s drawn %d times, want %d", id, c, want)
		}
	}
	if len(seen) != 14 {
		t.Errorf("%d distinct items drawn, want 14", len(seen))
	}
}

func TestSharedPrefix(t *testing.T) {
	d, err := Synthetic(SyntheticOptions{Seed: 2, Variants: 20, Mix: map[string]float64{"short": 1, "long_output": 1},
		SharedPrefix: SharedPrefixOptions{Count: 3, Tokens: 500, Fraction: 0.25}})
	if err != nil {
		t.Fatal(err)
	}
	tk, _ := tokenizer.Get("")
	prefixes := map[string]bool{}
	withPrefix := map[string]int{}
	for i := range d.Size() {
		it, _ := d.At(i)
		if got := countMessages(t, tk, it); got != it.PromptTokens {
			t.Fatalf("%s: promptTokens %d, recount %d", it.ID, it.PromptTokens, got)
		}
		if !it.SharedPrefix() {
			if it.Messages[0].Role != "user" {
				t.Fatalf("%s has no prefix but starts with %s", it.ID, it.Messages[0].Role)
			}
			continue
		}
		withPrefix[it.Category]++
		if it.Messages[0].Role != "system" || tk.Count(it.Messages[0].Content) != 500 || it.PrefixTokens != 500 {
			t.Fatalf("%s: prefix is not a 500-token system message", it.ID)
		}
		prefixes[it.Messages[0].Content] = true
	}
	if len(prefixes) != 3 {
		t.Errorf("%d distinct prefixes, want 3", len(prefixes))
	}
	for cat, n := range withPrefix {
		if n != 5 {
			t.Errorf("%s: %d of 20 items prefixed, want 5", cat, n)
		}
	}
	if d.Info().SharedPrefix != 10 {
		t.Errorf("info counts %d prefixed items, want 10", d.Info().SharedPrefix)
	}
}

func TestCacheBustNonceFirstAndUnique(t *testing.T) {
	o := SyntheticOptions{Seed: 2, Variants: 3, Mix: map[string]float64{"short": 1, "medium": 1},
		SharedPrefix: SharedPrefixOptions{Count: 1, Tokens: 200}}
	plain, _ := Synthetic(o)
	o.CacheBust = true
	d, err := Synthetic(o)
	if err != nil {
		t.Fatal(err)
	}
	tk, _ := tokenizer.Get("")
	starts := map[string]bool{}
	for n := range uint64(200) {
		it := d.Next()
		ref := plain.Draw(n)
		first := it.Messages[0].Content
		if !it.CacheBust || ref.CacheBust {
			t.Fatalf("draw %d: cacheBust flag %v on the busted item, %v on the plain one", n, it.CacheBust, ref.CacheBust)
		}
		if !strings.HasSuffix(first, ref.Messages[0].Content) || !strings.HasPrefix(first, "Request ") {
			t.Fatalf("draw %d: nonce is not at the very start: %.60q", n, first)
		}
		if ref.Messages[0].Content != plain.Draw(n).Messages[0].Content {
			t.Fatal("busting modified the shared item")
		}
		if got := countMessages(t, tk, it); got != it.PromptTokens {
			t.Fatalf("draw %d: promptTokens %d, recount %d", n, it.PromptTokens, got)
		}
		head := first[:len(first)-len(ref.Messages[0].Content)]
		if starts[head] {
			t.Fatalf("nonce %q used twice", head)
		}
		starts[head] = true
	}
}
