package dataset

import (
	"regexp"
	"strings"
)

// Scrubbing masks personal data and secrets in loaded prompts (never
// load-test with raw customer data). It is a safety net for data that was
// meant to be clean, not an anonymiser: names and addresses are not found.
//
// Kinds, in the order they are applied (earlier kinds win where patterns
// overlap, e.g. the digits of a key are not re-read as a phone number):
const (
	ScrubKey   = "key"   // API keys, tokens, bearer credentials, key=value secrets
	ScrubEmail = "email" // e-mail addresses
	ScrubCard  = "card"  // payment card numbers that pass the Luhn check
	ScrubPhone = "phone" // phone numbers with an international or national shape
)

// ScrubKinds lists the kinds in application order.
var ScrubKinds = []string{ScrubKey, ScrubEmail, ScrubCard, ScrubPhone} //nolint:gochecknoglobals // read-only

func mask(kind string) string { return "[" + strings.ToUpper(kind) + "]" }

var (
	keyPatterns = []*regexp.Regexp{ //nolint:gochecknoglobals // compiled once
		regexp.MustCompile(`\bsk-(?:proj-|ant-(?:api\d\d-)?|live-|svcacct-)?[A-Za-z0-9_-]{20,}`), // OpenAI, Anthropic
		regexp.MustCompile(`\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}`),                             // Stripe
		regexp.MustCompile(`\bAKIA[0-9A-Z]{16}\b`),                                               // AWS access key id
		regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{30,}`),                                       // GitHub
		regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{30,}`),                                     // GitHub fine-grained
		regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`),                                    // Slack
		regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`),                                            // Google
		regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`),    // JWT
	}
	// A credential after a word that says so: the value is masked, the word kept.
	labelledSecret = regexp.MustCompile( //nolint:gochecknoglobals // compiled once
		`(?i)\b((?:api[_-]?key|access[_-]?token|auth[_-]?token|secret(?:[_-]?key)?|password|passwd|bearer)` +
			`(?:["']?\s*[:=]\s*["']?|\s+))([A-Za-z0-9._~+/=-]{12,})`)
	// Long mixed-case-and-digit runs look like generated keys; hex hashes and
	// UUIDs (one case only) and ordinary words do not match the class test.
	longToken = regexp.MustCompile(`\b[A-Za-z0-9_-]{32,}\b`) //nolint:gochecknoglobals // compiled once

	emailPattern = regexp.MustCompile( //nolint:gochecknoglobals // compiled once
		`\b[A-Za-z0-9][A-Za-z0-9._%+-]*@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}\b`)

	// 13 to 19 digits, optionally grouped by single spaces or dashes.
	cardPattern = regexp.MustCompile(`\b\d(?:[ -]?\d){12,18}\b`) //nolint:gochecknoglobals // compiled once

	phonePatterns = []*regexp.Regexp{ //nolint:gochecknoglobals // compiled once
		// +CC then groups: +44 20 7946 0958, +1-202-555-0143, +86 138 0013 8000
		regexp.MustCompile(`\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,5}\b`),
		// North American: (202) 555-0143, 202-555-0143, 202.555.0143
		regexp.MustCompile(`(?:\(\d{3}\)\s?|\b\d{3}[-.])\d{3}[-.]\d{4}\b`),
		// Chinese mobile numbers: 11 digits starting 13-19
		regexp.MustCompile(`\b1[3-9]\d{9}\b`),
	}
)

// scrub masks s and adds what it masked to counts.
func scrub(s string, counts map[string]int) string {
	s = scrubKeys(s, counts)
	if strings.IndexByte(s, '@') >= 0 {
		s = replaceCounting(emailPattern, s, ScrubEmail, counts, nil)
	}
	if hasDigitRun(s, 7) {
		s = replaceCounting(cardPattern, s, ScrubCard, counts, luhnDigits)
		for _, p := range phonePatterns {
			s = replaceCounting(p, s, ScrubPhone, counts, phoneDigits)
		}
	}
	return s
}

func scrubKeys(s string, counts map[string]int) string {
	for _, p := range keyPatterns {
		s = replaceCounting(p, s, ScrubKey, counts, nil)
	}
	s = labelledSecret.ReplaceAllStringFunc(s, func(m string) string {
		sub := labelledSecret.FindStringSubmatch(m)
		if sub[2] == mask(ScrubKey) || !strings.ContainsAny(sub[2], "0123456789") {
			return m // a plain word after "password:" is prose, not a secret
		}
		counts[ScrubKey]++
		return sub[1] + mask(ScrubKey)
	})
	return replaceCounting(longToken, s, ScrubKey, counts, mixedClasses)
}

// replaceCounting replaces every match that passes keep (nil = all).
func replaceCounting(p *regexp.Regexp, s, kind string, counts map[string]int, keep func(string) bool) string {
	return p.ReplaceAllStringFunc(s, func(m string) string {
		if keep != nil && !keep(m) {
			return m
		}
		counts[kind]++
		return mask(kind)
	})
}

func hasDigitRun(s string, n int) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			if run++; run >= n {
				return true
			}
		case c == ' ' || c == '-' || c == '.' || c == '(' || c == ')' || c == '+':
		default:
			run = 0
		}
	}
	return false
}

// luhnDigits reports whether the digits of m pass the Luhn checksum used by
// every payment card number.
func luhnDigits(m string) bool {
	sum, double, n := 0, false, 0
	for i := len(m) - 1; i >= 0; i-- {
		c := m[i]
		if c < '0' || c > '9' {
			continue
		}
		d := int(c - '0')
		if double {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
		n++
	}
	return n >= 13 && n <= 19 && sum%10 == 0
}

// phoneDigits keeps matches with a plausible number of digits (E.164: up to
// 15) so that short codes and long account numbers are left alone.
func phoneDigits(m string) bool {
	n := 0
	for i := 0; i < len(m); i++ {
		if m[i] >= '0' && m[i] <= '9' {
			n++
		}
	}
	return n >= 10 && n <= 15
}

// mixedClasses says whether a long run has upper case, lower case and digits,
// the mark of a generated key rather than a word, a hex hash or a number.
func mixedClasses(m string) bool {
	var upper, lower, digit bool
	for i := 0; i < len(m); i++ {
		switch c := m[i]; {
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= '0' && c <= '9':
			digit = true
		}
	}
	return upper && lower && digit
}

// Scrub masks personal data and secrets in s, returning the masked text and
// how many values of each kind were masked.
func Scrub(s string) (string, map[string]int) {
	counts := map[string]int{}
	return scrub(s, counts), counts
}
