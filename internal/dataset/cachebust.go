package dataset

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"sync/atomic"
)

// buster puts a unique nonce at the very start of every item handed out, so
// no prefix cache can ever hit (§3.2: run it beside the same dataset without
// cacheBust; if both show the same TTFT the server's cache key is already
// being busted by something else, such as a timestamp in the system prompt).
type buster struct {
	run     uint32 // random per process: nonces differ across runs and instances
	counter atomic.Uint64
	c       *counter
	// additive[i] says whether item i's first message counts the same with a
	// nonce in front as nonce + message counted apart. Tokenizers split text at
	// word boundaries before merging, and a nonce ends with a fixed separator,
	// so this holds for nearly all text; when it does not, the whole message
	// is recounted on each draw.
	additive []bool
}

// nonceSep separates the nonce from the message: a paragraph break, which
// every built-in tokenizer splits on.
const nonceSep = "\n\n"

func newBuster(c *counter, items []Item) *buster {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails on supported platforms
	bs := &buster{run: binary.LittleEndian.Uint32(b[:]), c: c, additive: make([]bool, len(items))}
	sample := bs.nonce(0)
	ns := c.count(sample)
	for i := range items {
		first := items[i].Messages[0].Content
		bs.additive[i] = c.count(sample+first) == ns+c.count(first)
	}
	return bs
}

func (b *buster) nonce(n uint64) string {
	return fmt.Sprintf("Request %08x-%06d.%s", b.run, n, nonceSep)
}

// apply returns a copy of it whose first message starts with a fresh nonce
// and whose PromptTokens includes it.
func (b *buster) apply(it Item) Item {
	n := b.nonce(b.counter.Add(1))
	msgs := make([]Message, len(it.Messages))
	copy(msgs, it.Messages)
	first := msgs[0].Content
	msgs[0].Content = n + first
	if it.index < len(b.additive) && b.additive[it.index] {
		it.PromptTokens += b.c.count(n)
	} else {
		it.PromptTokens += b.c.count(msgs[0].Content) - b.c.count(first)
	}
	it.Messages = msgs
	return it
}
