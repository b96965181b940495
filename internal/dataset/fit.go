package dataset

import (
	"fmt"
	"strings"
	"sync"

	"github.com/llmstream/xk6-llmstream/internal/tokenizer"
)

// counter counts tokens, remembering the cost of short pieces: the grammar's
// vocabulary is small, so piece costs are looked up, not re-tokenized.
type counter struct {
	tk     *tokenizer.Tokenizer
	pieces sync.Map // piece -> token count
}

func newCounter(tk *tokenizer.Tokenizer) *counter { return &counter{tk: tk} }

func (c *counter) count(s string) int { return c.tk.Count(s) }

func (c *counter) piece(s string) int {
	if v, ok := c.pieces.Load(s); ok {
		return v.(int) //nolint:forcetypeassert // only ints are stored
	}
	n := c.tk.Count(s)
	c.pieces.Store(s, n)
	return n
}

// fit renders head + body pieces + tail with exactly target tokens. Pieces are
// added while their summed costs fit (tokenizers split text at word boundaries
// before merging, so the sum is nearly exact), then the whole text is counted
// and the end of the body adjusted until the exact count is target: whole
// pieces first, then single-token fillers for a gap smaller than a piece.
// Merges at the seams (a full stop followed by a paragraph break is one token
// in some encodings) can make one added token count as two, so the last step
// searches a few endings rather than walking one way.
func (c *counter) fit(l layout, target int, pickFiller func() string) (string, error) {
	fixed := c.count(l.head) + c.count(l.tail)
	if fixed > target {
		return c.cutToTokens(l.head+l.tail, target)
	}
	sp := &supply{next: l.body}
	text, err := c.fitBody(l, sp, fixed, target, pickFiller, true)
	if err == nil && c.count(text) == target {
		return text, nil
	}
	// A seam inside the frozen part did not add up: count whole texts only.
	return c.fitBody(l, sp, fixed, target, pickFiller, false)
}

// supply is the body pieces of one prompt, generated on demand.
type supply struct {
	pieces []string
	next   func() []string
}

func (s *supply) at(i int) string {
	for i >= len(s.pieces) {
		s.pieces = append(s.pieces, s.next()...)
	}
	return s.pieces[i]
}

// freezeMargin is how many tokens before the estimated end the body is
// frozen: long prompts are adjusted near their end only, so each adjustment
// counts the last few hundred bytes instead of the whole prompt.
const freezeMargin = 64

func (c *counter) fitBody(l layout, sp *supply, fixed, target int, pickFiller func() string, freeze bool) (string, error) {
	bf := &bodyFit{c: c, l: l, sp: sp, frozen: -1}
	k, est := 0, fixed // body = pieces[:k]
	for est+c.piece(sp.at(k)) <= target {
		est += c.piece(sp.at(k))
		k++
	}
	if freeze && est-fixed > 4*freezeMargin {
		bf.freezeBefore(k)
	}
	k, n := bf.reaim(k, target)
	k, n = bf.walk(k, n, target)
	if n == target {
		return bf.render(k, nil), nil
	}
	if text, ok := bf.pad(k, target, pickFiller); ok {
		return text, nil
	}
	if n > target { // the fixed text alone is over
		return c.cutToTokens(bf.render(0, nil), target)
	}
	return "", fmt.Errorf("could not fit a prompt to %d tokens with %s", target, c.tk.Name())
}

// bodyFit is one attempt at fitting a body: the text as head + pieces[:k] +
// fillers + tail, counted whole or from a frozen start.
type bodyFit struct {
	c  *counter
	l  layout
	sp *supply
	b  strings.Builder
	// frozen is the first piece after the frozen start (-1: none), and
	// frozenTokens the count of the head and the pieces before it.
	frozen, frozenTokens int
}

// write renders pieces[from:k], the fillers and the tail, after the head
// when asked.
func (bf *bodyFit) write(from, k int, pad []string, head bool) string {
	bf.b.Reset()
	if head {
		bf.b.WriteString(bf.l.head)
	}
	for _, p := range bf.sp.pieces[from:k] {
		bf.b.WriteString(p)
	}
	for _, p := range pad {
		bf.b.WriteString(p)
	}
	bf.b.WriteString(bf.l.tail)
	return bf.b.String()
}

func (bf *bodyFit) render(k int, pad []string) string { return bf.write(0, k, pad, true) }

// freezeBefore freezes the body at the first word start at least
// freezeMargin tokens before piece k. Tokenizers split text into words
// before merging, so the count of a text cut before a " Word" is the sum of
// the counts of both sides. The final text is counted whole in fit, which
// catches any exception.
func (bf *bodyFit) freezeBefore(k int) {
	tokens := 0
	for j := k - 1; j > 0; j-- {
		p := bf.sp.pieces[j]
		tokens += bf.c.piece(p)
		if tokens >= freezeMargin && len(p) > 1 && p[0] == ' ' && isLetter(p[1]) {
			bf.frozen = j
			bf.frozenTokens = bf.c.count(bf.l.head + strings.Join(bf.sp.pieces[:j], ""))
			return
		}
	}
}

// measure counts the text with k pieces and the fillers.
func (bf *bodyFit) measure(k int, pad []string) int {
	if bf.frozen >= 0 && k >= bf.frozen {
		return bf.frozenTokens + bf.c.count(bf.write(bf.frozen, k, pad, false))
	}
	return bf.c.count(bf.render(k, pad))
}

// reaim corrects the estimate, which misses seam merges (about one token per
// paragraph in some encodings), with the pieces' estimated costs a few
// times before walking piece by piece. It returns k and its measured count.
func (bf *bodyFit) reaim(k, target int) (int, int) {
	n := bf.measure(k, nil)
	for range 4 {
		k2 := k
		for diff := target - n; diff > 0; k2++ {
			if diff -= bf.c.piece(bf.sp.at(k2)); diff < 0 {
				break
			}
		}
		for diff := n - target; diff > 0 && k2 > 0; {
			k2--
			diff -= bf.c.piece(bf.sp.pieces[k2])
		}
		if k2 == k {
			break
		}
		k = k2
		n = bf.measure(k, nil)
	}
	return k, n
}

// walk drops whole pieces while the text is over target, then adds them
// while the next one still fits.
func (bf *bodyFit) walk(k, n, target int) (int, int) {
	for n > target && k > 0 {
		k--
		n = bf.measure(k, nil)
	}
	for n < target {
		bf.sp.at(k) // make sure pieces[k] exists
		m := bf.measure(k+1, nil)
		if m > target {
			break
		}
		k, n = k+1, m
	}
	return k, n
}

// pad closes a gap smaller than a piece with single-token fillers, dropping
// up to three of the last pieces where a seam merge leaves no room.
func (bf *bodyFit) pad(k, target int, pickFiller func() string) (string, bool) {
	pad := make([]string, 0, 8)
	for range 8 {
		pad = append(pad, pickFiller())
	}
	for drop := 0; drop <= min(k, 3); drop++ {
		for m := 0; m <= len(pad); m++ {
			if drop == 0 && m == 0 {
				continue
			}
			if bf.measure(k-drop, pad[:m]) == target {
				return bf.render(k-drop, pad[:m]), true
			}
		}
	}
	return "", false
}

// cutToTokens is the last resort when even the fixed text is too long: keep
// the first target tokens, backing off while the decoded text re-encodes to a
// different length (a cut inside a multi-byte character or merge).
func (c *counter) cutToTokens(text string, target int) (string, error) {
	ids := c.tk.Encode(text)
	for k := min(target, len(ids)); k > 0 && target-k < 8; k-- {
		s := c.tk.Decode(ids[:k])
		if c.count(s) == target {
			return s, nil
		}
		if c.count(s) < target {
			// pad the small remainder with fillers
			for _, f := range fillers {
				if c.count(s+f) == target {
					return s + f, nil
				}
			}
		}
	}
	return "", fmt.Errorf("could not cut %d tokens to %d with %s", len(ids), target, c.tk.Name())
}

func isLetter(b byte) bool { return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') }
