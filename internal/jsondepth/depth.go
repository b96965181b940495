// Package jsondepth bounds how deeply the JSON the client reads from a server
// may nest, before a validator or parser that recurses once per level sees it.
//
// gjson's validator (and any recursive descent parser) takes one call frame
// per nesting level, and a body is bounded only by maxBodySize or
// maxEventSize: a server answering millions of '[' grows a goroutine's stack
// to Go's 1 GB limit and kills the whole process ("fatal error: stack
// overflow"), not one call. Within checks the nesting in one pass, without
// recursion or allocation, so what reaches the validator is at most Limit
// levels deep: its stack is bounded by Limit frames and its work stays
// linear in the size of the body, which the size caps bound.
package jsondepth

import (
	"errors"
	"fmt"
)

// Limit is the deepest nesting of arrays and objects the client reads. No
// answer of any API we speak nests deeper than about ten levels (a tool
// call's arguments inside a message inside a choice); 512 leaves room for
// any real schema while keeping a validator's stack within a few hundred
// KB, far from Go's limit.
const Limit = 512

// Within reports whether no array or object in data nests deeper than limit
// levels. It is not a validator: brackets inside strings are skipped (with
// their escapes), mismatched brackets are left to the validator that runs
// next, which stops at the first one, so up to that point the depth counted
// here is the validator's own.
func Within[T string | []byte](data T, limit int) bool {
	if len(data) <= limit {
		// Each level opens with a byte of its own: data this short cannot
		// nest deeper, and the client reads one such event per token.
		return true
	}
	depth := 0
	for i := 0; i < len(data); i++ {
		c := data[i]
		if !structural[c] {
			continue // numbers, commas, spaces, keywords: the bulk of a body
		}
		switch c {
		case '"':
			i = stringEnd(data, i+1)
		case '[', '{':
			depth++
			if depth > limit {
				return false
			}
		default: // ']', '}'
			// Never below zero: a stray closer must not hide the openers after it.
			depth = max(depth-1, 0)
		}
	}
	return true
}

// structural marks the bytes Within acts on outside strings: one table
// look-up per byte is what keeps the scan cheaper than the validator after it.
var structural = [256]bool{'"': true, '[': true, ']': true, '{': true, '}': true} //nolint:gochecknoglobals // a constant table

// stringEnd returns the index of the quote that closes the string whose
// contents start at i (len(data) when it is not closed).
func stringEnd[T string | []byte](data T, i int) int {
	for ; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++ // the escaped byte, a quote or a backslash included
		case '"':
			return i
		}
	}
	return len(data)
}

// ErrTooDeep is what Check's errors wrap.
var ErrTooDeep = errors.New("nested too deeply")

// Check refuses data nested deeper than Limit, naming what it is (“the
// answer”, “event data”) in the error.
func Check[T string | []byte](data T, what string) error {
	if Within(data, Limit) {
		return nil
	}
	return fmt.Errorf("%s is %w (past %d levels of arrays and objects)", what, ErrTooDeep, Limit)
}
