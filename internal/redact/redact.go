// Package redact keeps the credentials a client sends out of every text the
// extension writes: errors, results, findings, reports, logs and its
// --http-debug dump.
//
// A Redactor learns secrets as the options give them (an API key, credential
// headers, a key in a URL's query) and cleans text of them. It is immutable:
// learning returns a new Redactor (or the same one when nothing is new), so a
// client's Redactor is shared by every goroutine of its calls without a lock,
// and a call's own secrets (its params' headers, its URL) live in the call's
// Redactor only, not in the client's for the rest of the run.
package redact

import (
	"slices"
	"strings"
	"sync"
)

// Mark replaces a secret in text.
const Mark = "[REDACTED]"

// minSecret is the shortest value learned as a secret: shorter ones
// ("1", "yes") would garble every text they occur in while protecting
// nothing.
const minSecret = 4

// Redactor knows a client's (or a call's) secrets and cleans text of them.
// The zero value and nil know none; Clean still cleans URLs.
type Redactor struct {
	known   map[string]struct{} // every value learned as given: a call that brings nothing new costs a lookup
	secrets []string            // every form replaced whole
	tokens  []string            // the bare tokens whose partial echoes are replaced too (partial.go)

	once     sync.Once
	replacer *strings.Replacer
}

// New is a Redactor that knows no secret yet.
func New() *Redactor { return &Redactor{} }

// Key learns credential values as they are sent: an API key, or a header's
// whole value ("Bearer sk-…"), which also teaches its token without the
// scheme (secret.go).
func (r *Redactor) Key(values ...string) *Redactor {
	var add []string
	for _, v := range values {
		if r.knows(v) || len(strings.TrimSpace(v)) < minSecret {
			continue
		}
		add = append(add, v)
	}
	return r.learn(add)
}

// Headers learns the values of the credential headers among h (by name,
// case-insensitive: see IsCredentialHeader); other headers are not secrets.
func (r *Redactor) Headers(h map[string]string) *Redactor {
	var add []string
	for name, v := range h {
		if !IsCredentialHeader(name) || r.knows(v) || len(strings.TrimSpace(v)) < minSecret {
			continue
		}
		add = append(add, v)
		if strings.EqualFold(name, "cookie") {
			add = append(add, cookieValues(v)...)
		}
	}
	return r.learn(add)
}

// URL learns the secrets a URL carries: the password of its user info and
// the values of its query parameters named like credentials (key, api_key,
// token, sig, …: see isCredentialParam).
func (r *Redactor) URL(raw string) *Redactor {
	if !strings.ContainsAny(raw, "?@") || r.knows(raw) {
		return r
	}
	add := urlSecrets(raw)
	if len(add) == 0 {
		return r
	}
	n := r.learn(add)
	n.known[raw] = struct{}{} // the next call with this URL costs a lookup
	return n
}

func (r *Redactor) knows(v string) bool {
	if r == nil {
		return false
	}
	_, ok := r.known[v]
	return ok
}

// learn is r with values (as given) and their forms added; r itself when
// there are none.
func (r *Redactor) learn(values []string) *Redactor {
	if len(values) == 0 {
		return r
	}
	n := &Redactor{known: map[string]struct{}{}}
	if r != nil {
		for k := range r.known {
			n.known[k] = struct{}{}
		}
		n.secrets = slices.Clone(r.secrets)
		n.tokens = slices.Clone(r.tokens)
	}
	for _, v := range values {
		n.known[v] = struct{}{}
		for _, f := range forms(v) {
			if len(f) >= minSecret && !slices.Contains(n.secrets, f) {
				n.secrets = append(n.secrets, f)
			}
		}
		if t := bareToken(v); len(t) >= minPartial && !slices.Contains(n.tokens, t) {
			n.tokens = append(n.tokens, t)
		}
	}
	// Longest first: where two secrets start at one place (a header's whole
	// value and its token), the whole one is replaced.
	slices.SortStableFunc(n.secrets, func(a, b string) int { return len(b) - len(a) })
	return n
}

// Clean is s without the secrets r knows (each whole, and the partial
// echoes of a token: partial.go) and with every URL's query values and
// password replaced (url.go), in that order of need: a URL first, so its
// query reads key=REDACTED rather than a mark inside a value.
func (r *Redactor) Clean(s string) string {
	s = cleanURLs(s)
	if r == nil || len(r.secrets) == 0 {
		return s
	}
	r.once.Do(func() {
		pairs := make([]string, 0, 2*len(r.secrets))
		for _, v := range r.secrets {
			pairs = append(pairs, v, Mark)
		}
		r.replacer = strings.NewReplacer(pairs...)
	})
	return r.partials(r.replacer.Replace(s))
}

// Secrets is how many forms of secrets r replaces (for tests and logs: never
// the secrets themselves).
func (r *Redactor) Secrets() int {
	if r == nil {
		return 0
	}
	return len(r.secrets)
}
