package tokenizer

import "sync/atomic"

// Recent counts with a Tokenizer, keeping the last short text it counted:
// a client's calls count the same short texts call after call (the first
// event of each answer, an embed call's input when the server reports no
// usage), and each count runs the encoding's regular expression over the
// text and allocates. It is safe for concurrent use.
type Recent struct {
	t    *Tokenizer
	last atomic.Pointer[counted]
}

type counted struct {
	s string
	n int
}

// recentMax is the longest text Recent keeps: a long one is seldom counted
// twice, and keeping it would hold its memory.
const recentMax = 256

// NewRecent counts with t.
func NewRecent(t *Tokenizer) *Recent { return &Recent{t: t} }

// Count is t.Count(s).
func (r *Recent) Count(s string) int {
	if len(s) > recentMax {
		return r.t.Count(s)
	}
	if c := r.last.Load(); c != nil && c.s == s {
		return c.n
	}
	n := r.t.Count(s)
	r.last.Store(&counted{s: s, n: n})
	return n
}
