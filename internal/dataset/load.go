package dataset

import (
	"fmt"
	"math/rand/v2"
	"path"
	"runtime"
	"strings"
	"sync"

	"github.com/llmstream/xk6-llmstream/internal/tokenizer"
)

// Formats that Load reads.
const (
	FormatJSONL    = "jsonl"    // one JSON object a line: {messages} (OpenAI chat), {prompt}, or a batch {body}
	FormatShareGPT = "sharegpt" // a JSON array (or JSON lines) of {conversations: [{from, value}]}
	FormatText     = "text"     // one prompt a line
)

// LoadOptions configure Load. Zero values mean defaults. The opt tags are
// the names scripts write (Dataset.load options, read by internal/config).
type LoadOptions struct {
	Format    string             `opt:"format"` // "" = from the file name: .jsonl, .json (ShareGPT), .txt
	Tokenizer string             `opt:"tokenizer"`
	Scrub     bool               `opt:"scrub"`
	Buckets   []Bucket           `opt:"buckets"` // nil = DefaultBuckets
	Mix       map[string]float64 `opt:"mix"`     // nil = in proportion to the items of each category
	// Filters: records outside [MinPromptTokens, MaxPromptTokens] are skipped
	// (0 = no limit).
	MinPromptTokens int `opt:"minPromptTokens"`
	MaxPromptTokens int `opt:"maxPromptTokens"`
	// Turns "all" makes one item per user turn of a conversation (history
	// included); the default "first" keeps the first user turn only.
	Turns     string `opt:"turns"`
	Limit     int    `opt:"limit,positive" want:"a whole number above 0 (leave it out for every item)"` // keep at most this many items (absent: all)
	Shuffle   bool   `opt:"shuffle"`
	Seed      uint64 `opt:"seed"`
	CacheBust bool   `opt:"cacheBust"`
	// Images attach pictures to the last user turn of each item (image.go).
	Images ImageOptions `opt:"images"`
}

// record is one prompt read from a file, before counting and bucketing.
type record struct {
	line         int // where it starts, for messages
	messages     []Message
	maxTokens    int    // from the record, 0 if absent
	reference    string // a reference answer whose length hints the output
	category     string // from the record, "" if absent
	conversation string
	turn         int
}

// Load parses data (the content of the file called name), counts tokens,
// scrubs, filters and buckets the records into a dataset. Malformed input is
// an error naming the file and line.
func Load(data []byte, name string, o LoadOptions) (*Dataset, error) {
	format := o.Format
	if format == "" {
		format = formatFromName(name)
	}
	buckets := o.Buckets
	if buckets == nil {
		buckets = DefaultBuckets()
	}
	if err := validateBuckets(buckets); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if o.Turns != "" && o.Turns != "first" && o.Turns != "all" {
		return nil, fmt.Errorf("%s: turns must be \"first\" or \"all\", got %q", name, o.Turns)
	}
	tk, err := tokenizer.Get(o.Tokenizer)
	if err != nil {
		return nil, err
	}
	var recs []record
	switch format {
	case FormatJSONL:
		recs, err = readJSONL(data, name)
	case FormatShareGPT:
		recs, err = readShareGPT(data, name, o.Turns == "all")
	case FormatText:
		recs = readText(data)
	default:
		return nil, fmt.Errorf("%s: unknown format %q (jsonl, sharegpt, text)", name, format)
	}
	if err != nil {
		return nil, err
	}
	l := &loader{name: name, o: o, c: newCounter(tk), buckets: buckets,
		skipped: map[string]int{}, scrubbed: map[string]int{}}
	items := l.build(recs)
	if o.Shuffle {
		r := rand.New(rand.NewPCG(o.Seed, 0x5eed)) // #nosec G404 -- not crypto
		r.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
	}
	if o.Limit > 0 && len(items) > o.Limit {
		l.skipped["limit"] += len(items) - o.Limit
		items = items[:o.Limit]
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%s: no usable prompts (%d records read, skipped: %v)", name, len(recs), l.skipped)
	}
	weights := o.Mix
	if weights == nil {
		weights = map[string]float64{}
		for i := range items {
			weights[items[i].Category]++
		}
	} else {
		for cat := range weights {
			if !hasCategory(items, cat) {
				return nil, fmt.Errorf("%s: mix names category %q but no prompt landed in it (categories: %v)",
					name, cat, categoriesOf(items))
			}
		}
	}
	d, err := newDataset(name, tk.Name(), items, weights)
	if err != nil {
		return nil, err
	}
	if o.CacheBust {
		d.bust = newBuster(l.c, d.items)
	}
	if err := d.withImages(o.Images, o.Seed); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	d.info = d.describe()
	d.info.Skipped, d.info.Scrubbed = l.skipped, l.scrubbed
	return d, nil
}

func formatFromName(name string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".jsonl", ".ndjson":
		return FormatJSONL
	case ".json":
		return FormatShareGPT
	default:
		return FormatText
	}
}

type loader struct {
	name     string
	o        LoadOptions
	c        *counter
	buckets  []Bucket
	skipped  map[string]int
	scrubbed map[string]int
}

// build scrubs and counts records in parallel (tokenizing a large file is the
// slow part of loading), then filters and buckets them in file order.
func (l *loader) build(recs []record) []Item {
	type counted struct {
		prompt, output int
		scrubbed       map[string]int
	}
	out := make([]counted, len(recs))
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(recs); i += workers {
				r := &recs[i]
				var sc map[string]int
				if l.o.Scrub {
					sc = map[string]int{}
					for j := range r.messages {
						r.messages[j].Content = scrub(r.messages[j].Content, sc)
					}
				}
				n := 0
				for _, m := range r.messages {
					n += l.c.count(m.Content)
				}
				outTokens := r.maxTokens
				if outTokens == 0 && r.reference != "" {
					outTokens = l.c.count(r.reference)
				}
				out[i] = counted{prompt: n, output: outTokens, scrubbed: sc}
			}
		})
	}
	wg.Wait()
	items := make([]Item, 0, len(recs))
	for i := range recs {
		r, c := &recs[i], out[i]
		for k, v := range c.scrubbed {
			l.scrubbed[k] += v
		}
		if c.prompt == 0 {
			l.skipped["empty prompt"]++
			continue
		}
		if c.prompt < l.o.MinPromptTokens || (l.o.MaxPromptTokens > 0 && c.prompt > l.o.MaxPromptTokens) {
			l.skipped["prompt tokens outside limits"]++
			continue
		}
		cat, maxTokens := r.category, c.output
		if cat == "" {
			b, ok := l.bucket(c.prompt, c.output)
			if !ok {
				l.skipped["no bucket matched"]++
				continue
			}
			cat = b.Name
			if maxTokens == 0 {
				maxTokens = b.MaxTokens
			}
		}
		if maxTokens <= 0 {
			maxTokens = 256
		}
		id := fmt.Sprintf("%s:%d", path.Base(l.name), r.line)
		if r.turn > 1 {
			id = fmt.Sprintf("%s#%d", id, r.turn)
		}
		items = append(items, Item{ID: id, Category: cat, Messages: r.messages, PromptTokens: c.prompt,
			MaxTokens: maxTokens, Turn: max(1, r.turn), Conversation: r.conversation, PrefixID: -1})
	}
	return items
}

func (l *loader) bucket(prompt, output int) (Bucket, bool) {
	for _, b := range l.buckets {
		if b.matches(prompt, output) {
			return b, true
		}
	}
	return Bucket{}, false
}

func hasCategory(items []Item, cat string) bool {
	for i := range items {
		if items[i].Category == cat {
			return true
		}
	}
	return false
}

func categoriesOf(items []Item) []string {
	seen := map[string]bool{}
	var out []string
	for i := range items {
		if c := items[i].Category; !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out
}
