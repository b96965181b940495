package dataset

import (
	"reflect"
	"strings"
	"testing"

	"github.com/llmstream/xk6-llmstream/internal/tokenizer"
)

// countMessages recounts an item from scratch, as a server would.
func countMessages(t *testing.T, tk *tokenizer.Tokenizer, it Item) int {
	t.Helper()
	n := 0
	for _, m := range it.Messages {
		n += tk.Count(m.Content)
	}
	return n
}

func TestSyntheticTokenCountsExactAndInRange(t *testing.T) {
	for _, name := range tokenizer.Names() {
		t.Run(name, func(t *testing.T) {
			d, err := Synthetic(SyntheticOptions{Seed: 7, Tokenizer: name, Variants: 20})
			if err != nil {
				t.Fatal(err)
			}
			tk, _ := tokenizer.Get(name)
			builtin := builtinCategories()
			perCat := map[string]map[string]bool{}
			for i := range d.Size() {
				it, _ := d.At(i)
				if got := countMessages(t, tk, it); got != it.PromptTokens {
					t.Fatalf("%s: promptTokens %d, recount %d", it.ID, it.PromptTokens, got)
				}
				c := builtin[it.Category]
				if !c.Prompt.contains(it.PromptTokens) {
					t.Errorf("%s: %d prompt tokens outside [%d, %d]", it.ID, it.PromptTokens, c.Prompt.Min, c.Prompt.Max)
				}
				if !c.MaxTokens.contains(it.MaxTokens) {
					t.Errorf("%s: maxTokens %d outside [%d, %d]", it.ID, it.MaxTokens, c.MaxTokens.Min, c.MaxTokens.Max)
				}
				if perCat[it.Category] == nil {
					perCat[it.Category] = map[string]bool{}
				}
				perCat[it.Category][it.Prompt()] = true
			}
			if len(perCat) != 4 {
				t.Fatalf("categories %v, want the 4 built-ins", perCat)
			}
			for cat, prompts := range perCat {
				if len(prompts) < 20 {
					t.Errorf("%s: %d distinct prompts, want >= 20", cat, len(prompts))
				}
			}
		})
	}
}

func TestSyntheticTextIsReadable(t *testing.T) {
	d, err := Synthetic(SyntheticOptions{Seed: 1, Variants: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i := range d.Size() {
		it, _ := d.At(i)
		p := it.Prompt()
		letters := 0
		for _, r := range p {
			if r == ' ' || r == '\n' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') {
				letters++
			}
		}
		if float64(letters) < 0.9*float64(len(p)) {
			t.Errorf("%s is not prose: %.80q", it.ID, p)
		}
		if ws := len(strings.Fields(p)); ws < it.PromptTokens/3 {
			t.Errorf("%s: %d words for %d tokens", it.ID, ws, it.PromptTokens)
		}
	}
}

func TestSyntheticDeterministic(t *testing.T) {
	o := SyntheticOptions{Seed: 42, Variants: 4, Turns: Range{1, 3},
		Mix:          map[string]float64{"short": 1, "medium": 1, "long_output": 1},
		SharedPrefix: SharedPrefixOptions{Count: 2, Tokens: 100, Fraction: 0.5}}
	a, err := Synthetic(o)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Synthetic(o)
	if !reflect.DeepEqual(a.items, b.items) {
		t.Fatal("same options gave different items")
	}
	o.Seed = 43
	c, _ := Synthetic(o)
	if reflect.DeepEqual(a.items, c.items) {
		t.Fatal("another seed gave the same items")
	}
	for n := range uint64(50) {
		if x, y := a.Draw(n), b.Draw(n); x.ID != y.ID {
			t.Fatalf("draw %d: %s vs %s", n, x.ID, y.ID)
		}
	}
}

func TestSyntheticCustomCategories(t *testing.T) {
	w := 2.0
	d, err := Synthetic(SyntheticOptions{Seed: 3, Mix: map[string]float64{"short": 1, "support": 2},
		Categories: map[string]CategorySpec{
			"support": {Prompt: &Range{100, 120}, MaxTokens: &Range{64, 64}, Weight: &w, Variants: 25},
			"short":   {Prompt: &Range{5, 8}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Categories(); !reflect.DeepEqual(got, []string{"short", "support"}) {
		t.Fatalf("categories %v", got)
	}
	tk, _ := tokenizer.Get("")
	n := map[string]int{}
	for i := range d.Size() {
		it, _ := d.At(i)
		n[it.Category]++
		r := Range{5, 8}
		if it.Category == "support" {
			r = Range{100, 120}
		}
		if !r.contains(it.PromptTokens) || countMessages(t, tk, it) != it.PromptTokens {
			t.Errorf("%s: %d tokens, want in %v and exact", it.ID, it.PromptTokens, r)
		}
	}
	if n["support"] != 25 || n["short"] != DefaultVariants {
		t.Errorf("variants %v", n)
	}
}

func TestSyntheticRejectsBadOptions(t *testing.T) {
	bad := []SyntheticOptions{
		{Mix: map[string]float64{"nope": 1}},
		{Mix: map[string]float64{"short": -1}},
		{Mix: map[string]float64{"short": 0}},
		{Categories: map[string]CategorySpec{"x": {Prompt: &Range{1, 2}}}},
		{Categories: map[string]CategorySpec{"bad name": {Prompt: &Range{1, 2}, MaxTokens: &Range{1, 1}}}},
		{Categories: map[string]CategorySpec{"short": {Prompt: &Range{50, 10}}}},
		{Tokenizer: "gpt9"},
		{Turns: Range{3, 2}},
		{SharedPrefix: SharedPrefixOptions{Count: 1}},
		{SharedPrefix: SharedPrefixOptions{Count: 1, Tokens: 10, Fraction: 2}},
	}
	for i, o := range bad {
		o.Variants = 1
		if _, err := Synthetic(o); err == nil {
			t.Errorf("case %d accepted: %+v", i, o)
		}
	}
}

func TestConversationsGrowTurnByTurn(t *testing.T) {
	d, err := Synthetic(SyntheticOptions{Seed: 5, Variants: 4, Turns: Range{2, 4}, Mix: map[string]float64{"medium": 1}})
	if err != nil {
		t.Fatal(err)
	}
	tk, _ := tokenizer.Get("")
	prev := map[string]Item{}
	for i := range d.Size() {
		it, _ := d.At(i)
		if got := countMessages(t, tk, it); got != it.PromptTokens {
			t.Fatalf("%s: promptTokens %d, recount %d", it.ID, it.PromptTokens, got)
		}
		if len(it.Messages) != 2*it.Turn-1 || it.Messages[len(it.Messages)-1].Role != "user" {
			t.Fatalf("%s turn %d has %d messages", it.ID, it.Turn, len(it.Messages))
		}
		if p, ok := prev[it.Conversation]; ok {
			if it.Turn != p.Turn+1 || it.PromptTokens <= p.PromptTokens {
				t.Fatalf("%s does not continue %s", it.ID, p.ID)
			}
			if !reflect.DeepEqual(it.Messages[:len(p.Messages)], p.Messages) {
				t.Fatalf("%s rewrote the history of %s", it.ID, p.ID)
			}
		} else if it.Turn != 1 {
			t.Fatalf("%s starts at turn %d", it.ID, it.Turn)
		}
		prev[it.Conversation] = it
	}
	// Draws of a category hand out a conversation's turns in order.
	seen := map[string]int{}
	for n := range uint64(d.Size()) {
		it := d.Draw(n)
		if it.Turn != seen[it.Conversation]+1 {
			t.Fatalf("draw %d: %s after turn %d", n, it.ID, seen[it.Conversation])
		}
		seen[it.Conversation] = it.Turn
	}
}
