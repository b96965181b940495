package dataset

import (
	"fmt"
	"math"
	"sync"
	"testing"
)

// drawsOf makes each instance draw its k6 share of total draws and returns
// the item ids per instance.
func drawsOf(d *Dataset, shares []Share, total uint64) [][]string {
	out := make([][]string, len(shares))
	for i, s := range shares {
		p := d.Part(s)
		for k := range s.Count(total) {
			out[i] = append(out[i], p.Draw(k).ID)
		}
	}
	return out
}

// twoCategories is a 1:1 mix of 60 short and 60 medium prompts, built once
// for the tests that only read it (parts are cached per share: tests that
// draw through next() build their own).
var twoCategories = sync.OnceValues(func() (*Dataset, error) {
	return Synthetic(SyntheticOptions{Seed: 7, Mix: map[string]float64{"short": 1, "medium": 1}, Variants: 60})
})

func twoCategoriesFor(t *testing.T) *Dataset {
	t.Helper()
	d, err := twoCategories()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// freshTwoCategories is the same mix with draw counters of its own.
func freshTwoCategories(t *testing.T) *Dataset {
	t.Helper()
	d, err := twoCategories()
	if err != nil {
		t.Fatal(err)
	}
	return newPartsOf(d)
}

// When each instance makes its k6 share of the draws, the instances together
// draw exactly the items one instance would have drawn, none twice.
func TestPartsTogetherDrawWhatOneInstanceDraws(t *testing.T) {
	d := twoCategoriesFor(t)
	const total = 120 // one pass through both categories
	single := map[string]bool{}
	for n := range uint64(total) {
		single[d.Draw(n).ID] = true
	}
	for _, sequence := range testSequences {
		union := map[string]int{}
		for _, ids := range drawsOf(d, k6Shares(t, sequence), total) {
			for _, id := range ids {
				union[id]++
			}
		}
		for id, n := range union {
			if n > 1 {
				t.Errorf("%s: %s drawn by %d instances", sequence, id, n)
			}
			if !single[id] {
				t.Errorf("%s: %s drawn, but not by a single instance", sequence, id)
			}
		}
		if len(union) != len(single) {
			t.Errorf("%s: %d distinct items over the instances, a single instance draws %d", sequence, len(union), len(single))
		}
	}
}

// Whatever the total, no item goes out twice while no instance has drawn all
// of its items, and the union differs from a single instance's draws only at
// the end of each category's sequence.
func TestPartsNeverShareAnItem(t *testing.T) {
	small := func() CategorySpec {
		return CategorySpec{Prompt: &Range{Min: 5, Max: 10}, MaxTokens: &Range{Min: 8, Max: 8}}
	}
	mixed, err := Synthetic(SyntheticOptions{Seed: 5, Variants: 30, // four classes 3:5:1:1, like the default mix
		Mix:        map[string]float64{"a": 3, "b": 5, "c": 1, "d": 1},
		Categories: map[string]CategorySpec{"a": small(), "b": small(), "c": small(), "d": small()}})
	if err != nil {
		t.Fatal(err)
	}
	neverShare(t, twoCategoriesFor(t), 120) // a full pass: 60 of each
	neverShare(t, mixed, 56)                // medium, half the draws, has 30 items
}

func neverShare(t *testing.T, d *Dataset, most uint64) {
	t.Helper()
	worst := map[string]int{}
	defer func() { t.Logf("%v: most items missing from the union: %v", d.Categories(), worst) }()
	for _, sequence := range testSequences {
		shares := k6Shares(t, sequence)
		for total := uint64(1); total <= most; total++ {
			single := map[string]bool{}
			for n := range total {
				single[d.Draw(n).ID] = true
			}
			union := map[string]bool{}
			for i, ids := range drawsOf(d, shares, total) {
				for _, id := range ids {
					if union[id] {
						t.Fatalf("%s, %d draws: %s drawn twice (instance %d)", sequence, total, id, i)
					}
					union[id] = true
				}
			}
			missing := 0
			for id := range single {
				if !union[id] {
					missing++
				}
			}
			// Each instance's count of a category is off its exact share by
			// under one draw (the schedule), as is the single instance's.
			if missing > worst[sequence] {
				worst[sequence] = missing
			}
			if limit := 2 * len(shares); missing > limit {
				t.Errorf("%s, %d draws: %d of a single instance's items not drawn, want at most %d", sequence, total, missing, limit)
			}
		}
	}
}

// Each instance keeps the mix on its own, so the mix holds over the union
// whatever each instance's pace. Striping the one global sequence of draws
// instead would hand one instance every short prompt and the other every
// medium one in this 1:1 mix.
func TestEveryPartKeepsTheMix(t *testing.T) {
	d := freshTwoCategories(t)
	for _, sequence := range testSequences {
		for i, s := range k6Shares(t, sequence) {
			p := d.Part(s)
			short := 0
			for n := 1; n <= 200; n++ {
				if p.Next().Category == "short" {
					short++
				}
				if math.Abs(float64(short)-float64(n)/2) > 1 {
					t.Fatalf("%s instance %d: %d short in %d draws", sequence, i, short, n)
				}
			}
		}
	}
}

// onePass draws from p until every category has handed out each of its items
// once, and returns those first draws of each category.
func onePass(p *Part) []Item {
	var out []Item
	left := len(p.items)
	for n := uint64(0); left > 0; n++ {
		c, occ := p.d.sched.at(n)
		if occ < uint64(len(p.items[c])) {
			out = append(out, p.Draw(n))
			if occ == uint64(len(p.items[c]))-1 {
				left--
			}
		}
	}
	return out
}

// newPartsOf copies d with fresh draw counters (the items are shared, read-only).
func newPartsOf(d *Dataset) *Dataset {
	c := &Dataset{name: d.name, tokenizer: d.tokenizer, items: d.items, cats: d.cats, sched: d.sched, bust: d.bust, info: d.info}
	c.whole = newPart(c, Share{})
	return c
}

// A conversation stays on one instance, its turns in order there, and every
// conversation goes to some instance.
func TestConversationStaysOnOneInstance(t *testing.T) {
	d, err := Synthetic(SyntheticOptions{Seed: 3, Mix: map[string]float64{"short": 2, "medium": 1}, Variants: 12,
		Turns: Range{Min: 1, Max: 4}})
	if err != nil {
		t.Fatal(err)
	}
	for _, sequence := range testSequences {
		owner := map[string]int{}
		for i, s := range k6Shares(t, sequence) {
			p := d.Part(s)
			last := map[string]int{}
			for _, it := range onePass(p) {
				if o, ok := owner[it.Conversation]; ok && o != i {
					t.Fatalf("%s: conversation %s on instances %d and %d", sequence, it.Conversation, o, i)
				}
				owner[it.Conversation] = i
				if it.Turn != last[it.Conversation]+1 {
					t.Fatalf("%s instance %d: %s turn %d after turn %d", sequence, i, it.Conversation, it.Turn, last[it.Conversation])
				}
				last[it.Conversation] = it.Turn
			}
			if len(p.Unsplit()) > 0 {
				t.Fatalf("%s instance %d: unsplit %v", sequence, i, p.Unsplit())
			}
		}
		if len(owner) != 24 {
			t.Errorf("%s: %d conversations drawn, want all 24", sequence, len(owner))
		}
	}
}

// A loaded conversation's later turns can fall in another length class than
// its first (the history grows); the conversation still has one owner.
func TestConversationAcrossCategoriesHasOneOwner(t *testing.T) {
	var items []Item
	for c := range 8 {
		conv := fmt.Sprintf("c%d", c)
		for turn := 1; turn <= 3; turn++ {
			cat := "short"
			if turn == 3 {
				cat = "medium"
			}
			items = append(items, Item{ID: fmt.Sprintf("%s#%d", conv, turn), Category: cat, Conversation: conv, Turn: turn,
				Messages: []Message{{Role: "user", Content: "hi"}}, PromptTokens: 1, MaxTokens: 1})
		}
	}
	d, err := newDataset("t", "", items, map[string]float64{"short": 2, "medium": 1})
	if err != nil {
		t.Fatal(err)
	}
	owner := map[string]int{}
	for i, s := range k6Shares(t, "0,1/2,1") {
		for _, it := range onePass(d.Part(s)) {
			if o, ok := owner[it.Conversation]; ok && o != i {
				t.Fatalf("conversation %s on instances %d and %d", it.Conversation, o, i)
			}
			owner[it.Conversation] = i
		}
	}
	if len(owner) != 8 {
		t.Fatalf("%d conversations drawn, want 8", len(owner))
	}
}

// A category too small to split is drawn whole by every instance, and says
// so, rather than going missing from an instance's mix.
func TestCategoryTooSmallToSplit(t *testing.T) {
	items := []Item{{ID: "rare", Category: "rare"}}
	for i := range 4 {
		items = append(items, Item{ID: fmt.Sprintf("common%d", i), Category: "common"})
	}
	d, err := newDataset("t", "", items, map[string]float64{"rare": 1, "common": 1})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range k6Shares(t, "0,1/2,1") {
		p := d.Part(s)
		seen := map[string]bool{}
		for range 4 {
			seen[p.Next().ID] = true
		}
		if !seen["rare"] || len(seen) != 3 {
			t.Errorf("instance %d drew %v, want rare and its 2 common items", i, seen)
		}
		if i == 1 && (len(p.Unsplit()) != 1 || p.Unsplit()[0] != "rare") {
			t.Errorf("instance %d: unsplit %v, want [rare]", i, p.Unsplit())
		}
	}
}

// The whole test is the dataset itself: one part, the same sequence.
func TestWholeTestPartIsTheDataset(t *testing.T) {
	d := freshTwoCategories(t)
	whole := k6Shares(t, "0,1")[0]
	if d.Part(whole) != d.Part(Share{}) || d.Part(Share{}) != d.whole {
		t.Fatal("the whole test has more than one part")
	}
	half := k6Shares(t, "0,1/2,1")[0]
	if d.Part(half) != d.Part(half) {
		t.Fatal("a share's part is built twice: two draw counters")
	}
	for n := range uint64(50) {
		if a, b := d.Next().ID, d.Draw(n).ID; a != b {
			t.Fatalf("draw %d: next %s, draw %s", n, a, b)
		}
	}
	if d.Draws() != 50 || d.Part(half).Draws() != 0 {
		t.Fatalf("draws %d, half part %d", d.Draws(), d.Part(half).Draws())
	}
}

// Take is the whole test's draw, whichever instance takes it, and counts
// as a draw of the instance that took it.
func TestTakeIsTheWholeTestsDraw(t *testing.T) {
	d := freshTwoCategories(t)
	shares := k6Shares(t, "0,1/3,2/3,1")
	p := d.Part(shares[1])
	for g := range uint64(130) {
		if got, want := p.Take(g).ID, d.Draw(g).ID; got != want {
			t.Fatalf("Take(%d) = %s, the whole test's draw is %s", g, got, want)
		}
	}
	if p.Draws() != 130 || d.Draws() != 0 {
		t.Fatalf("draws: instance %d (want 130), whole %d (want 0)", p.Draws(), d.Draws())
	}
}
