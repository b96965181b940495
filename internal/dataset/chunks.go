package dataset

import (
	"fmt"
	"sort"
	"strconv"
	"sync/atomic"

	"github.com/llmstream/xk6-llmstream/internal/tokenizer"
)

// ChunkOptions configure Chunks: document chunks of exact token lengths, for
// embeddings, drawn in batches whose sizes follow a mix. The opt tags are
// the names scripts write (Dataset.chunks options).
type ChunkOptions struct {
	Seed uint64 `opt:"seed"`
	// Tokens is each chunk's length, drawn per chunk in the range; 0 = 256.
	Tokens Range `opt:"tokens"`
	Count  int   `opt:"count,positive" want:"a whole number of chunks above 0 (leave it out for 256)"` // distinct chunks; absent: 256
	// Batch weighs the batch sizes drawn, by size ({'1': 8, '32': 1}); nil
	// = batches of one.
	Batch     map[string]float64 `opt:"batch"`
	Tokenizer string             `opt:"tokenizer"` // "" = o200k_base
	// Files are text files to cut into the chunks instead of synthetic
	// prose (read by the script binding into Texts), in order, each chunk
	// exactly Tokens long; the last piece of a file shorter than the range
	// is left out.
	Files []string     `opt:"files"`
	Texts []SourceText `opt:"-"`
}

// SourceText is a text file's content, to cut into chunks.
type SourceText struct {
	Name string
	Text string
}

// Batch is one draw of Chunks: the inputs of one embeddings call.
type Batch struct {
	Inputs   []string
	Tokens   []int  // each input's tokens with the chunks' tokenizer
	Category string // "batch_<size>", the call's category tag
}

// TotalTokens is the batch's tokens.
func (b Batch) TotalTokens() int {
	n := 0
	for _, t := range b.Tokens {
		n += t
	}
	return n
}

// Chunks is an immutable set of chunks and the draw counter every VU of the
// process shares.
type Chunks struct {
	tokenizer string
	texts     []string
	tokens    []int
	sizes     []int // batch sizes, sorted; the schedule's categories
	sched     *schedule
	seed      uint64
	draws     atomic.Uint64
}

// maxBatch bounds a batch size: no embeddings server we know takes more
// inputs in one call (OpenAI's limit is 2048).
const maxBatch = 2048

// NewChunks builds the chunks. The same options give the same chunks.
func NewChunks(o ChunkOptions) (*Chunks, error) {
	if o.Tokens == (Range{}) {
		o.Tokens = Range{256, 256}
	}
	if o.Tokens.Min < 1 || o.Tokens.Max < o.Tokens.Min {
		return nil, fmt.Errorf("tokens: need 1 <= min <= max, got [%d, %d]", o.Tokens.Min, o.Tokens.Max)
	}
	if o.Count == 0 {
		o.Count = 256
	}
	if o.Count < 1 {
		return nil, fmt.Errorf("count must be at least 1, got %d", o.Count)
	}
	if len(o.Files) > 0 && len(o.Texts) == 0 {
		return nil, fmt.Errorf("files %v: no text read from them", o.Files)
	}
	tk, err := tokenizer.Get(o.Tokenizer)
	if err != nil {
		return nil, err
	}
	sizes, weights, err := batchMix(o.Batch)
	if err != nil {
		return nil, err
	}
	s, err := newSchedule(weights)
	if err != nil {
		return nil, fmt.Errorf("batch: %w", err)
	}
	c := &Chunks{tokenizer: tk.Name(), sizes: sizes, sched: s, seed: o.Seed}
	cnt := newCounter(tk)
	if len(o.Texts) > 0 {
		err = c.cut(cnt, o)
	} else {
		err = c.synthesize(cnt, o)
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// batchMix reads the batch sizes and their weights, sorted by size.
func batchMix(m map[string]float64) ([]int, []float64, error) {
	if len(m) == 0 {
		return []int{1}, []float64{1}, nil
	}
	bySize := map[int]float64{}
	for k, w := range m {
		n, err := strconv.Atoi(k)
		switch {
		case err != nil || n < 1 || n > maxBatch:
			return nil, nil, fmt.Errorf("batch: size %q must be a whole number from 1 to %d", k, maxBatch)
		case w < 0:
			return nil, nil, fmt.Errorf("batch: weight of size %d is negative", n)
		}
		if _, dup := bySize[n]; dup {
			return nil, nil, fmt.Errorf("batch: size %d is given twice", n)
		}
		bySize[n] = w
	}
	var sizes []int
	for n, w := range bySize {
		if w > 0 {
			sizes = append(sizes, n)
		}
	}
	sort.Ints(sizes)
	weights := make([]float64, len(sizes))
	for i, n := range sizes {
		weights[i] = bySize[n]
	}
	return sizes, weights, nil
}

func (c *Chunks) synthesize(cnt *counter, o ChunkOptions) error {
	for i := range o.Count {
		r := streamFor(o.Seed, "chunk", i)
		g := grammar{r}
		n := 0
		l := layout{body: func() []string {
			n++
			sep := " "
			if n == 1 {
				sep = ""
			} else if n%6 == 1 {
				sep = "\n\n"
			}
			return words(sep + g.sentence())
		}}
		target := draw(r, o.Tokens)
		text, err := cnt.fit(l, target, func() string { return fillers[r.IntN(len(fillers))] })
		if err != nil {
			return fmt.Errorf("chunk %d: %w", i, err)
		}
		c.texts, c.tokens = append(c.texts, text), append(c.tokens, target)
	}
	return nil
}

// cut cuts the texts into consecutive chunks of exact lengths, up to Count.
func (c *Chunks) cut(cnt *counter, o ChunkOptions) error {
	r := streamFor(o.Seed, "chunk-files", 0)
	for _, src := range o.Texts {
		ids := cnt.tk.Encode(src.Text)
		for pos := 0; len(c.texts) < o.Count; {
			target := draw(r, o.Tokens)
			if pos+target > len(ids) {
				break
			}
			// A cut inside a merge or a multi-byte character re-encodes to
			// another count: take a little more and let cutToTokens find
			// the exact end.
			end := min(pos+target+4, len(ids))
			text, err := cnt.cutToTokens(cnt.tk.Decode(ids[pos:end]), target)
			if err != nil {
				return fmt.Errorf("%s: %w", src.Name, err)
			}
			c.texts, c.tokens = append(c.texts, text), append(c.tokens, target)
			pos += target
		}
	}
	if len(c.texts) == 0 {
		return fmt.Errorf("files %v: too short for one chunk of %d tokens", o.Files, o.Tokens.Min)
	}
	return nil
}

// Size is the number of distinct chunks.
func (c *Chunks) Size() int { return len(c.texts) }

// Tokenizer names the tokenizer the chunks were counted with.
func (c *Chunks) Tokenizer() string { return c.tokenizer }

// BatchSizes lists the batch sizes drawn and their shares.
func (c *Chunks) BatchSizes() map[int]float64 {
	out := make(map[int]float64, len(c.sizes))
	for i, n := range c.sizes {
		out[n] = c.sched.share(i)
	}
	return out
}

// Next returns the next batch of the process-wide sequence.
func (c *Chunks) Next() Batch { return c.Draw(c.draws.Add(1) - 1) }

// Draw returns batch n without advancing Next: its size from the mix's
// schedule, its chunks consecutive from a start drawn from n, so a run is
// reproducible draw by draw and every chunk is drawn alike.
func (c *Chunks) Draw(n uint64) Batch {
	cat, _ := c.sched.at(n)
	size := c.sizes[cat]
	start := splitmix(c.seed^n*0x9e3779b97f4a7c15) % uint64(len(c.texts))
	b := Batch{Inputs: make([]string, size), Tokens: make([]int, size), Category: "batch_" + strconv.Itoa(size)}
	for j := range size {
		k := (start + uint64(j)) % uint64(len(c.texts))
		b.Inputs[j], b.Tokens[j] = c.texts[k], c.tokens[k]
	}
	return b
}

// Draws is how many batches Next has handed out.
func (c *Chunks) Draws() uint64 { return c.draws.Load() }
