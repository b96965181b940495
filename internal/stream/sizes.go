package stream

import "sync/atomic"

// Sizes remembers how long a client's answers are, in bytes of text and in
// gaps, so that the next answer's text and gap list are allocated once, at
// about their final size, when its first token arrives. Grown by doubling
// instead, a 150-token answer leaves about ten discarded copies of each
// behind: garbage made while the other streams are being read. One Sizes is
// shared by the calls of one client; the zero value knows nothing yet.
//
// The hint falls at once to a shorter answer and rises at most twofold a
// call: with a prompt set that mixes short and long answers, a short answer
// must not reserve what a long one needed (that would be more garbage than
// doubling makes), so it follows the short ones, and the long ones grow from
// there as they would without it.
type Sizes struct {
	text, gaps atomic.Int32
}

// maxSizeHint bounds what is reserved ahead (bytes of text, or gaps): an
// answer longer than that grows as it needs.
const maxSizeHint = 1 << 16

// reserve sizes a call's text and gaps as the hint says. It runs at the
// call's first output, before the call has kept any text or gap.
func (s *Sizes) reserve(c *Call) {
	if s == nil {
		return
	}
	if n := int(s.text.Load()); n > 0 {
		c.text.Grow(n)
	}
	if n := int(s.gaps.Load()); n > 0 {
		c.gaps = make(Gaps, 0, n)
	}
}

// learn takes a finished call's sizes into the hint for the next one. Calls
// of one client end concurrently; a lost update only leaves a hint a call old.
func (s *Sizes) learn(c *Call) {
	if s == nil || c.chunks == 0 {
		return
	}
	follow(&s.text, c.text.Len())
	follow(&s.gaps, len(c.gaps))
}

// follow moves a hint to n: down at once, up at most twofold.
func follow(hint *atomic.Int32, n int) {
	if old := int(hint.Load()); old > 0 {
		n = min(n, 2*old)
	}
	hint.Store(int32(min(n, maxSizeHint))) // #nosec G115 -- bounded above
}
