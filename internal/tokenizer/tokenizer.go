// Package tokenizer counts tokens offline with OpenAI's BPE encodings, so that
// synthetic prompts have exact lengths and streams without usage still get a
// token count. Encodings are loaded once per process, on first use.
package tokenizer

import (
	"fmt"
	"sort"
	"sync"

	tk "github.com/tiktoken-go/tokenizer"
)

// Default is the encoding used when none is named (GPT-4o and later).
const Default = "o200k_base"

var known = map[string]tk.Encoding{ //nolint:gochecknoglobals // read-only table
	"o200k_base":  tk.O200kBase,
	"cl100k_base": tk.Cl100kBase,
	"p50k_base":   tk.P50kBase,
	"r50k_base":   tk.R50kBase,
}

var (
	mu     sync.Mutex                //nolint:gochecknoglobals // guards codecs
	codecs = map[string]*Tokenizer{} //nolint:gochecknoglobals // one per encoding per process
)

// Tokenizer encodes and counts text; it is safe for concurrent use.
type Tokenizer struct {
	name  string
	codec tk.Codec
}

// Names lists the encodings that Get accepts.
func Names() []string {
	out := make([]string, 0, len(known))
	for n := range known {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Get returns the tokenizer for an encoding name ("" means Default).
func Get(name string) (*Tokenizer, error) {
	if name == "" {
		name = Default
	}
	enc, ok := known[name]
	if !ok {
		return nil, fmt.Errorf("unknown tokenizer %q (known: %v)", name, Names())
	}
	mu.Lock()
	defer mu.Unlock()
	if t, ok := codecs[name]; ok {
		return t, nil
	}
	c, err := tk.Get(enc)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", name, err)
	}
	t := &Tokenizer{name: name, codec: c}
	codecs[name] = t
	return t, nil
}

// Name is the encoding's name.
func (t *Tokenizer) Name() string { return t.name }

// Count returns the number of tokens in s (invalid UTF-8 is counted as replaced).
func (t *Tokenizer) Count(s string) int {
	n, err := t.codec.Count(s)
	if err != nil {
		return 0
	}
	return n
}

// Encode returns the token ids of s.
func (t *Tokenizer) Encode(s string) []uint {
	ids, _, err := t.codec.Encode(s)
	if err != nil {
		return nil
	}
	return ids
}

// Decode turns token ids back into text.
func (t *Tokenizer) Decode(ids []uint) string {
	s, err := t.codec.Decode(ids)
	if err != nil {
		return ""
	}
	return s
}
