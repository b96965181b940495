package redact

import (
	"encoding/base64"
	"net/url"
	"strings"
)

// credentialHeaders carry credentials whatever their value looks like.
var credentialHeaders = map[string]bool{ //nolint:gochecknoglobals // read-only table
	"authorization": true, "proxy-authorization": true, "cookie": true, "set-cookie": true,
}

// credentialHeaderParts mark a header as a credential wherever they occur in
// its name: x-api-key, api-key, x-goog-api-key, ocp-apim-subscription-key,
// x-auth-token, cf-access-client-secret, … A plain "key" does not: an
// Idempotency-Key or a session key header is no credential, and hiding it
// would hide what a debug dump is read for.
var credentialHeaderParts = []string{ //nolint:gochecknoglobals // read-only table
	"api-key", "apikey", "api_key", "subscription-key", "access-key", "auth", "token", "secret", "password",
}

// IsCredentialHeader says whether a header of this name (any case) carries
// a credential: its value is learned as a secret and never printed.
func IsCredentialHeader(name string) bool {
	n := strings.ToLower(strings.TrimSpace(name))
	if credentialHeaders[n] {
		return true
	}
	for _, p := range credentialHeaderParts {
		if strings.Contains(n, p) {
			return true
		}
	}
	return false
}

// forms are the ways a credential value v may come back in text: as sent;
// its token without the scheme ("Bearer sk-…" → "sk-…"); a Basic token's
// decoded user:password and password; and each of those as JSON escapes a
// slash (\/) and as a URL query escapes it (a base64 token's + / =).
func forms(v string) []string {
	v = strings.TrimSpace(v)
	out := []string{v}
	if scheme, tok, ok := strings.Cut(v, " "); ok && isScheme(scheme) {
		tok = strings.TrimSpace(tok)
		out = append(out, tok)
		if strings.EqualFold(scheme, "basic") {
			if dec, err := base64.StdEncoding.DecodeString(tok); err == nil {
				out = append(out, string(dec))
				if _, pw, ok := strings.Cut(string(dec), ":"); ok {
					out = append(out, pw)
				}
			}
		}
	}
	plain := out[:len(out):len(out)] // the escapes below are added after it
	for _, f := range plain {
		if strings.Contains(f, "/") {
			out = append(out, strings.ReplaceAll(f, "/", `\/`))
		}
		if e := url.QueryEscape(f); e != f {
			out = append(out, e)
		}
	}
	return out
}

// bareToken is v without its scheme: the part a server echoes, whole or cut.
func bareToken(v string) string {
	v = strings.TrimSpace(v)
	if scheme, tok, ok := strings.Cut(v, " "); ok && isScheme(scheme) {
		return strings.TrimSpace(tok)
	}
	return v
}

// isScheme says whether s is an authorization scheme (Bearer, Basic, Token,
// ApiKey, SSWS, …): a single word of letters.
func isScheme(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') {
			return false
		}
	}
	return true
}

// cookieValues are the values of a Cookie header's pairs ("a=1; b=2").
func cookieValues(v string) []string {
	var out []string
	for _, pair := range strings.Split(v, ";") {
		if _, val, ok := strings.Cut(strings.TrimSpace(pair), "="); ok && len(val) >= minSecret {
			out = append(out, val)
		}
	}
	return out
}
