package dataset

import (
	"crypto/rand"
	"encoding/binary"
	"strings"
	"sync/atomic"
)

// buster puts a unique nonce at the very start of every item handed out, so
// no prefix cache can ever hit (run it beside the same dataset without
// cacheBust; if both show the same TTFT the server's cache key is already
// being busted by something else, such as a timestamp in the system prompt).
type buster struct {
	run     uint32 // random per process: nonces differ across runs and instances
	counter atomic.Uint64
	c       *counter
	words   []string // single-token words the nonce is spelt with
	tokens  int      // tokens of every nonce; 0 = count each one
	// additive[i] says whether item i's first message counts the same with a
	// nonce in front as nonce + message counted apart. Tokenizers split text at
	// word boundaries before merging, and a nonce ends with a fixed separator,
	// so this holds for nearly all text; when it does not, the whole message
	// is recounted on each draw.
	additive []bool
}

// nonceSep separates the nonce from the message: a paragraph break, which
// every built-in tokenizer splits on.
const nonceSep = ".\n\n"

// nonceDigits is how many words encode the draw counter: len(nonceWords)^6
// draws (over 10^10) before a nonce repeats within a run.
const nonceDigits = 6

func newBuster(c *counter, items []Item) *buster {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails on supported platforms
	bs := &buster{run: binary.LittleEndian.Uint32(b[:]), c: c, additive: make([]bool, len(items))}
	// A nonce is "Request" and words that are one token each, so its length
	// is the same for every draw and is counted once, here; if this tokenizer
	// splits some word in two, every draw's nonce is counted instead.
	for _, w := range nouns {
		if c.piece(" "+w) == 1 {
			bs.words = append(bs.words, " "+w)
		}
	}
	if len(bs.words) >= 16 {
		bs.tokens = c.count(bs.nonce(0))
		for _, n := range []uint64{1, 12345, 1 << 40} {
			if c.count(bs.nonce(n)) != bs.tokens {
				bs.tokens = 0
			}
		}
	} else {
		bs.words = []string{" alpha", " beta", " gamma", " delta"}
	}
	sample := bs.nonce(0)
	ns := c.count(sample)
	for i := range items {
		first := items[i].Messages[0].Content
		bs.additive[i] = c.count(sample+first) == ns+c.count(first)
	}
	return bs
}

// nonce spells the process's run id and the draw number in words.
func (b *buster) nonce(n uint64) string {
	var s strings.Builder
	s.WriteString("Request")
	base := uint64(len(b.words))
	run := uint64(b.run)
	for range 3 {
		s.WriteString(b.words[run%base])
		run /= base
	}
	for range nonceDigits {
		s.WriteString(b.words[n%base])
		n /= base
	}
	s.WriteString(nonceSep)
	return s.String()
}

// apply returns a copy of it whose first message starts with a fresh nonce
// and whose PromptTokens includes it.
func (b *buster) apply(it Item) Item {
	n := b.nonce(b.counter.Add(1))
	msgs := make([]Message, len(it.Messages))
	copy(msgs, it.Messages)
	first := msgs[0].Content
	msgs[0].Content = n + first
	switch {
	case it.index >= len(b.additive) || !b.additive[it.index]:
		it.PromptTokens += b.c.count(msgs[0].Content) - b.c.count(first)
	case b.tokens > 0:
		it.PromptTokens += b.tokens
	default:
		it.PromptTokens += b.c.count(n)
	}
	it.Messages = msgs
	it.CacheBust = true
	return it
}
