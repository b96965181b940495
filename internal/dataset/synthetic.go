package dataset

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync"

	"github.com/llmstream/xk6-llmstream/internal/tokenizer"
)

// SyntheticOptions configure Synthetic. Zero values mean defaults. The opt
// tags are the names scripts write (Dataset.synthetic options, read by
// internal/config).
type SyntheticOptions struct {
	Seed uint64 `opt:"seed"`
	// Mix weighs the categories drawn; nil means the default mix (short 3,
	// medium 5, long_context 1, long_output 1). Only categories with a positive
	// weight are generated.
	Mix map[string]float64 `opt:"mix"`
	// Categories overrides built-in categories or adds custom ones.
	Categories map[string]CategorySpec `opt:"categories"`
	Tokenizer  string                  `opt:"tokenizer"`                                                                               // "" = o200k_base
	Variants   int                     `opt:"variants,positive" want:"a whole number of items above 0 (leave it out for the default)"` // items per category unless the category says; absent: DefaultVariants
	// SharedPrefix, when Count > 0, starts a fraction of the items with one of
	// Count shared system prompts of Tokens tokens (a prefix-cache scenario).
	SharedPrefix SharedPrefixOptions `opt:"sharedPrefix"`
	CacheBust    bool                `opt:"cacheBust"` // a unique nonce first in every draw: no prefix cache can hit
	// Turns, when Max > 0, makes every variant a conversation of Min..Max user
	// turns, each turn an item whose history holds the earlier turns.
	Turns Range `opt:"turns"`
	// Images attach pictures to the last user turn of each item (image.go).
	Images ImageOptions `opt:"images"`
}

// CategorySpec overrides or defines a category. Nil/zero fields keep the
// built-in value.
type CategorySpec struct {
	Prompt    *Range   `opt:"prompt"`
	MaxTokens *Range   `opt:"maxTokens"`
	Weight    *float64 `opt:"weight"`
	Variants  int      `opt:"variants,positive" want:"a whole number of items above 0 (leave it out for the default)"`
	Style     string   `opt:"style"`
}

// SharedPrefixOptions describe the shared prefixes of a cache scenario.
type SharedPrefixOptions struct {
	Count    int     `opt:"count,positive" want:"a whole number of prefixes above 0 (leave sharedPrefix out for none)"`
	Tokens   int     `opt:"tokens,positive" want:"a whole number of tokens above 0"`
	Fraction float64 `opt:"fraction,positive" want:"a number in (0, 1] (leave it out for every item)"` // absent: 1, every item
}

// Synthetic generates a dataset. The same options give the same items, in the
// same order, on every machine.
func Synthetic(o SyntheticOptions) (*Dataset, error) {
	cats, weights, err := resolveCategories(o)
	if err != nil {
		return nil, err
	}
	if o.Turns.Max > 0 && (o.Turns.Min < 1 || o.Turns.Min > o.Turns.Max) {
		return nil, fmt.Errorf("turns: need 1 <= min <= max, got min %d max %d", o.Turns.Min, o.Turns.Max)
	}
	tk, err := tokenizer.Get(o.Tokenizer)
	if err != nil {
		return nil, err
	}
	c := newCounter(tk)
	prefixes, err := makePrefixes(c, o.Seed, o.SharedPrefix)
	if err != nil {
		return nil, err
	}
	// Every variant is generated from its own random stream, so variants can be
	// built in parallel and still come out the same.
	type job struct {
		cat   Category
		index int
	}
	var jobs []job
	for _, cat := range cats {
		for v := range cat.Variants {
			jobs = append(jobs, job{cat, v})
		}
	}
	results := make([][]Item, len(jobs))
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for j := range next {
				g := &generator{c: c, seed: o.Seed, prefixes: prefixes, turns: o.Turns}
				results[j], errs[j] = g.variant(jobs[j].cat, jobs[j].index, prefixes.assign(jobs[j].index))
			}
		})
	}
	for j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
	var items []Item
	for j := range jobs {
		if errs[j] != nil {
			return nil, fmt.Errorf("synthetic %s variant %d: %w", jobs[j].cat.Name, jobs[j].index, errs[j])
		}
		items = append(items, results[j]...)
	}
	d, err := newDataset("synthetic", tk.Name(), items, weights)
	if err != nil {
		return nil, err
	}
	if o.CacheBust {
		d.bust = newBuster(c, d.items)
		d.info = d.describe()
	}
	if err := d.withImages(o.Images, o.Seed); err != nil {
		return nil, err
	}
	return d, nil
}

// resolveCategories merges built-ins, custom specs and the mix into the list of
// categories to generate (sorted by name) and their weights.
func resolveCategories(o SyntheticOptions) ([]Category, map[string]float64, error) {
	all := builtinCategories()
	for name, spec := range o.Categories {
		c, err := withSpec(all, name, spec)
		if err != nil {
			return nil, nil, err
		}
		all[name] = c
	}
	weights, err := mixWeights(o, all)
	if err != nil {
		return nil, nil, err
	}
	var cats []Category
	for name, w := range weights {
		if w <= 0 {
			continue
		}
		c := all[name]
		c.Weight = w
		if c.Variants == 0 {
			c.Variants = o.Variants
		}
		if c.Variants == 0 {
			c.Variants = DefaultVariants
		}
		if err := validateCategory(c); err != nil {
			return nil, nil, err
		}
		cats = append(cats, c)
	}
	sort.Slice(cats, func(i, j int) bool { return cats[i].Name < cats[j].Name })
	return cats, weights, nil
}

// withSpec is category name (a built-in one, or a new one) with what its
// custom spec sets.
func withSpec(all map[string]Category, name string, spec CategorySpec) (Category, error) {
	c, ok := all[name]
	if !ok {
		if spec.Prompt == nil || spec.MaxTokens == nil {
			return c, fmt.Errorf("category %q is not built in (%v): give it prompt and maxTokens ranges", name, BuiltinNames())
		}
		c = Category{Name: name}
	}
	if spec.Prompt != nil {
		c.Prompt = *spec.Prompt
	}
	if spec.MaxTokens != nil {
		c.MaxTokens = *spec.MaxTokens
	}
	if spec.Weight != nil {
		c.Weight = *spec.Weight
	}
	if spec.Variants != 0 {
		c.Variants = spec.Variants
	}
	if spec.Style != "" {
		if !validStyle(spec.Style) {
			return c, fmt.Errorf("category %q: unknown style %q (question, task, document, essay)", name, spec.Style)
		}
		c.style = spec.Style
	}
	if c.style == "" {
		c.style = styleFor(c)
	}
	return c, nil
}

// mixWeights are the categories' weights: the mix when given, else the
// custom categories' own weights when any has one, else the default mix with
// every custom category in it at weight 1.
func mixWeights(o SyntheticOptions, all map[string]Category) (map[string]float64, error) {
	weights := map[string]float64{}
	switch {
	case o.Mix != nil:
		for name, w := range o.Mix {
			if _, ok := all[name]; !ok {
				return nil, fmt.Errorf("mix names category %q, which is neither built in (%v) nor in categories", name, BuiltinNames())
			}
			if w < 0 {
				return nil, fmt.Errorf("mix weight of %q is negative", name)
			}
			weights[name] = w
		}
	case len(o.Categories) > 0 && anyWeight(o.Categories):
		for name, c := range all {
			if c.Weight > 0 {
				weights[name] = c.Weight
			}
		}
	default:
		weights = defaultMix()
		for name := range o.Categories { // a custom category without weight still joins the mix
			if _, ok := weights[name]; !ok {
				weights[name] = 1
			}
		}
	}
	return weights, nil
}

func anyWeight(specs map[string]CategorySpec) bool {
	for _, s := range specs {
		if s.Weight != nil {
			return true
		}
	}
	return false
}

// generator builds the items of one variant.
type generator struct {
	c        *counter
	seed     uint64
	prefixes *prefixSet
	turns    Range
}

func streamFor(seed uint64, category string, variant int) *rand.Rand {
	h := fnv.New64a()
	_, _ = h.Write([]byte(category))
	return rand.New(rand.NewPCG(seed, h.Sum64()^uint64(variant)*0x9e3779b97f4a7c15)) // #nosec G115 G404 -- not crypto
}

func draw(r *rand.Rand, rg Range) int { return rg.Min + r.IntN(rg.Max-rg.Min+1) }

// variant returns one item, or one item per turn for conversations. prefix is
// the shared prefix index for this variant, or -1.
func (g *generator) variant(cat Category, v int, prefix int) ([]Item, error) {
	r := streamFor(g.seed, cat.Name, v)
	gr := grammar{r}
	filler := func() string { return fillers[r.IntN(len(fillers))] }
	var history []Message
	base := Item{Category: cat.Name, Conversation: fmt.Sprintf("%s-%03d", cat.Name, v), PrefixID: -1}
	if prefix >= 0 {
		p := g.prefixes.texts[prefix]
		history = append(history, Message{Role: "system", Content: p})
		base.PrefixTokens, base.PrefixID = g.prefixes.tokens, prefix
	}
	turns := 1
	if g.turns.Max > 0 {
		turns = draw(r, g.turns)
	}
	items := make([]Item, 0, turns)
	tokens := base.PrefixTokens
	for t := 1; t <= turns; t++ {
		target := draw(r, cat.Prompt)
		maxTokens := draw(r, cat.MaxTokens)
		text, err := g.c.fit(gr.layout(cat.style, maxTokens), target, filler)
		if err != nil {
			return nil, err
		}
		history = append(history, Message{Role: "user", Content: text})
		tokens += target
		it := base
		it.Turn = t
		it.MaxTokens = maxTokens
		it.PromptTokens = tokens
		it.Messages = history[:len(history):len(history)] // appends below must not alias
		it.ID = base.Conversation
		if g.turns.Max > 0 {
			it.ID = fmt.Sprintf("%s#%d", base.Conversation, t)
		}
		items = append(items, it)
		if t < turns {
			// the reply the model might have given, as long as it was allowed to be
			reply, err := g.c.fit(layout{head: "Here is what I found.", body: func() []string {
				return words(" " + gr.sentence())
			}}, it.MaxTokens, filler)
			if err != nil {
				return nil, err
			}
			history = append(history, Message{Role: "assistant", Content: reply})
			tokens += it.MaxTokens
		}
	}
	return items, nil
}
