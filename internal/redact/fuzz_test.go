package redact

import (
	"strings"
	"testing"
)

// Whatever text surrounds a learned secret, and however it was set (an API
// key, a header's token after its scheme, a URL's key), Clean leaves none of
// it.
func FuzzCleanRemovesSecret(f *testing.F) {
	f.Add("sk-proj-Ab3dEf6hIj9k", "Incorrect API key provided: ", ". Retry", uint8(0))
	f.Add("AIzaSyD-EXAMPLE", `Post "http://h/v1?key=`, `": dial tcp`, uint8(2))
	f.Add("abcd", "abc", "bcd", uint8(1))
	f.Add("abc[", "abc", "0", uint8(0)) // "abc" + Mark reads "abc[": the mark's own letters, not the secret
	f.Fuzz(func(t *testing.T, secret, before, after string, how uint8) {
		secret = strings.TrimSpace(secret)
		if len(secret) < minSecret || strings.Contains(Mark, secret) || strings.Contains(urlMark, secret) ||
			strings.ContainsAny(secret, " \t\r\n\x00") {
			t.Skip() // a mark's own letters, or not one token
		}
		if how%3 == 2 && strings.ContainsAny(secret, "&;#?=%+") {
			t.Skip() // a URL would carry it escaped
		}
		var r *Redactor
		switch how % 3 {
		case 0:
			r = New().Key(secret)
		case 1:
			r = New().Headers(map[string]string{"authorization": "Bearer " + secret})
		default:
			r = New().URL("https://h.test/v1?key=" + secret)
		}
		if r.Secrets() == 0 {
			t.Fatalf("%q was not learned", secret)
		}
		// A secret may seem to reappear where the text before it runs into a
		// mark ("abc" + "[REDACTED]" holds "abc["); that is the mark's
		// letters, not the secret, so the marks are taken out of the check.
		got := r.Clean(before + secret + after)
		if strings.Contains(strings.ReplaceAll(got, Mark, "\x00"), secret) {
			t.Fatalf("Clean(%q) = %q keeps the secret", before+secret+after, got)
		}
	})
}
