package redact

import (
	"net/url"
	"regexp"
	"strings"
)

// A URL in text (an error's `Post "https://…?key=sk-…": dial tcp …`, a
// server's message) may carry a key in its query or a password in its user
// info: Clean replaces every query value and password with this, whatever
// the parameter's name, so a URL's shape (which parameters) still shows.
const urlMark = "REDACTED"

// urlInText finds URLs in free text: up to a space, a quote or an angle
// bracket (Go's errors quote the URL they name).
var urlInText = regexp.MustCompile("(?i)\\b(?:https?|wss?)://[^\\s\"'<>`]+") //nolint:gochecknoglobals // compiled once

// credentialParamParts name a query parameter that carries a credential:
// key (Gemini's ?key=, api_key, subscription-key), token, sig (an Azure
// SAS), …
var credentialParamParts = []string{ //nolint:gochecknoglobals // read-only table
	"key", "token", "secret", "password", "auth", "sig", "credential",
}

func isCredentialParam(name string) bool {
	n := strings.ToLower(name)
	for _, p := range credentialParamParts {
		if strings.Contains(n, p) {
			return true
		}
	}
	return false
}

// urlSecrets are the secrets raw carries: its user info's password and the
// values of its credential parameters, decoded and as written.
func urlSecrets(raw string) []string {
	var out []string
	add := func(v string) {
		if len(v) >= minSecret {
			out = append(out, v)
		}
	}
	if strings.Contains(raw, "@") { // only user info needs a parse, which a call's URL rarely has
		if u, err := url.Parse(raw); err == nil && u.User != nil {
			if pw, ok := u.User.Password(); ok {
				add(pw)
			}
		}
	}
	_, query, ok := strings.Cut(raw, "?")
	if !ok {
		return out
	}
	query, _, _ = strings.Cut(query, "#")
	for _, part := range strings.FieldsFunc(query, func(c rune) bool { return c == '&' || c == ';' }) {
		name, val, _ := strings.Cut(part, "=")
		if !isCredentialParam(name) {
			continue
		}
		add(val)
		if dec, err := url.QueryUnescape(val); err == nil && dec != val {
			add(dec)
		}
	}
	return out
}

// CleanURL is raw as it may be shown (a client's name, an option's error):
// its query values and its user info's password replaced, even when it
// lacks its scheme (an option's mistake).
func CleanURL(raw string) string {
	if urlInText.MatchString(raw) {
		return cleanURLs(raw)
	}
	return cleanURL(raw)
}

// cleanURLs replaces, in every URL of s, the query's and the fragment's
// values and the user info's password.
func cleanURLs(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	return urlInText.ReplaceAllStringFunc(s, func(u string) string {
		// Prose punctuation right after a URL is not part of it.
		trimmed := strings.TrimRight(u, ".,:;!)]}")
		return cleanURL(trimmed) + u[len(trimmed):]
	})
}

func cleanURL(u string) string {
	start := 0
	if i := strings.Index(u, "://"); i >= 0 {
		start = i + len("://")
	}
	hostEnd := len(u)
	if i := strings.IndexAny(u[start:], "/?#"); i >= 0 {
		hostEnd = start + i
	}
	if at := strings.LastIndexByte(u[start:hostEnd], '@'); at >= 0 {
		if user, _, ok := strings.Cut(u[start:start+at], ":"); ok {
			u = u[:start] + user + ":" + urlMark + u[start+at:]
		}
	}
	q := strings.IndexAny(u, "?#")
	if q < 0 {
		return u
	}
	return u[:q] + cleanQuery(u[q:])
}

// cleanQuery replaces every value of a query (and fragment), starting at
// its '?' (or '#'): "?a=1&b" → "?a=REDACTED&REDACTED".
func cleanQuery(q string) string {
	var b strings.Builder
	b.Grow(len(q))
	part := func(p string) {
		if p == "" {
			return
		}
		if name, _, ok := strings.Cut(p, "="); ok {
			b.WriteString(name + "=" + urlMark)
			return
		}
		b.WriteString(urlMark)
	}
	from := 0
	for i := 0; i < len(q); i++ {
		switch q[i] {
		case '?', '#', '&', ';':
			part(q[from:i])
			b.WriteByte(q[i])
			from = i + 1
		}
	}
	part(q[from:])
	return b.String()
}
