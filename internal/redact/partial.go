package redact

import (
	"regexp"
	"strconv"
	"strings"
)

// Providers echo a rejected key cut short: "Incorrect API key provided:
// sk-abc12***************************wxyz", "sk-proj-****1234",
// "sk-abc...xyz". Such an echo is replaced when it is made of a known
// token's start, a mask (two or more '*', '.' or '•', or '…') and the
// token's end, showing at least minShown of its characters; and so is an
// unmasked word that is a token's start or end of at least a third of it
// and minFragment characters (a key cut at a message's length limit). A
// shorter piece is left: keys of one kind share their first characters
// ("sk-proj-", "sk-ant-api03-"), and a message naming that prefix leaks
// nothing.
//
// Not covered: a piece from a token's middle, a token spelt out in another
// encoding than the ones learned (secret.go), and the tokens of secrets
// shorter than minPartial, whose pieces would match ordinary words.

// minPartial is the shortest token whose partial echoes are looked for.
const minPartial = 12

// minShown is how many of a token's characters a masked echo must show to
// be replaced: fewer ("sk-…") tell nothing.
const minShown = 4

// minFragment is the shortest unmasked start or end of a token replaced
// (and it must be a third of the token at least).
const minFragment = 8

// tokenChars are the characters of API keys and tokens (base64 and
// base64url included); a '.' is not one: it is a mask, and JWTs' separator.
const tokenChars = `[A-Za-z0-9_\-+/=]` // #nosec G101 -- the characters a token is made of, not a credential

// echo is a word, or a word with a mask in it.
var echo = regexp.MustCompile(tokenChars + `*(?:\*{2,}|\.{2,}|…+|•+)` + tokenChars + `*|` + //nolint:gochecknoglobals // compiled once
	tokenChars + `{` + strconv.Itoa(minFragment) + `,}`)

var mask = regexp.MustCompile(`\*{2,}|\.{2,}|…+|•+`) //nolint:gochecknoglobals // compiled once

// partials replaces the partial echoes of r's tokens in s.
func (r *Redactor) partials(s string) string {
	if len(r.tokens) == 0 {
		return s
	}
	return echo.ReplaceAllStringFunc(s, func(w string) string {
		if r.partialEcho(w) {
			return Mark
		}
		return w
	})
}

func (r *Redactor) partialEcho(w string) bool {
	loc := mask.FindStringIndex(w)
	for _, t := range r.tokens {
		if loc == nil {
			if len(w) < len(t) && 3*len(w) >= len(t) && (strings.HasPrefix(t, w) || strings.HasSuffix(t, w)) {
				return true
			}
			continue
		}
		pre, post := w[:loc[0]], w[loc[1]:]
		if len(pre)+len(post) >= minShown && len(pre)+len(post) < len(t) &&
			strings.HasPrefix(t, pre) && strings.HasSuffix(t, post) {
			return true
		}
	}
	return false
}
