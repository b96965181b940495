package redact

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

const token = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"

// A provider's 401 as it quotes the key it refused.
func refusal(key string) string {
	return `HTTP 401: {"error":{"message":"Incorrect API key provided: ` + key +
		`. You can find your API key at https://platform.openai.com/account/api-keys.","code":"invalid_api_key"}}`
}

func requireClean(t *testing.T, r *Redactor, text string, secrets ...string) string {
	t.Helper()
	got := r.Clean(text)
	for _, s := range secrets {
		require.NotContains(t, got, s)
	}
	return got
}

// A credential set as a header's whole value ("Bearer sk-…") is redacted
// as the server echoes it: without its scheme.
func TestHeaderTokenWithoutScheme(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"Authorization", "authorization", "AUTHORIZATION", "Proxy-Authorization"} {
		r := New().Headers(map[string]string{name: "Bearer " + token})
		got := requireClean(t, r, refusal(token), token)
		require.Contains(t, got, "Incorrect API key provided: "+Mark, name)
		require.Equal(t, "sent "+Mark, r.Clean("sent Bearer "+token), "the whole value is one mark")
	}
	for _, name := range []string{"x-api-key", "X-Api-Key", "api-key", "x-goog-api-key", "X-GOOG-API-KEY", "Ocp-Apim-Subscription-Key", "X-Auth-Token"} {
		r := New().Headers(map[string]string{name: token})
		requireClean(t, r, refusal(token), token)
	}
}

func TestNotCredentialHeaders(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"Idempotency-Key", "X-Session-Key", "Content-Type", "anthropic-version", "X-Request-Id"} {
		require.False(t, IsCredentialHeader(name), name)
	}
	r := New().Headers(map[string]string{"Idempotency-Key": "0123456789abcdef", "anthropic-version": "2023-06-01"})
	require.Zero(t, r.Secrets())
	require.Equal(t, "key 0123456789abcdef version 2023-06-01", r.Clean("key 0123456789abcdef version 2023-06-01"))
}

func TestAPIKey(t *testing.T) {
	t.Parallel()
	r := New().Key(token)
	requireClean(t, r, refusal(token), token)
	require.Same(t, r, r.Key(token), "a known key teaches nothing")
	require.Same(t, r, r.Key(""), "an empty key is no secret")
	require.Same(t, r, r.Key("abc"), "nor one too short to be one")
}

// Basic's token is base64 of user:password; its password is a secret too.
func TestBasic(t *testing.T) {
	t.Parallel()
	r := New().Headers(map[string]string{"Authorization": "Basic YWxpY2U6czNjcmV0LXBhc3N3b3Jk"}) // alice:s3cret-password
	got := requireClean(t, r, "bad credentials YWxpY2U6czNjcmV0LXBhc3N3b3Jk for alice:s3cret-password (s3cret-password)",
		"YWxpY2U6czNjcmV0LXBhc3N3b3Jk", "s3cret-password")
	require.Contains(t, got, "bad credentials")
}

// Escaped echoes: a JSON body escaping a slash, a URL query escaping + / =.
func TestEscapedForms(t *testing.T) {
	t.Parallel()
	key := "ab+cd/ef=gh1234"
	r := New().Key(key)
	requireClean(t, r, `{"message":"bad key ab+cd\/ef=gh1234"}`, `ab+cd\/ef=gh1234`)
	requireClean(t, r, "echo ab%2Bcd%2Fef%3Dgh1234", "ab%2Bcd%2Fef%3Dgh1234")
}

// A key in a URL's query (Gemini's ?key=, api_key=) or a password in its
// user info is learned: its echo anywhere is redacted.
func TestURLSecrets(t *testing.T) {
	t.Parallel()
	r := New().URL("https://generativelanguage.googleapis.com/v1beta?key=AIzaSyD-EXAMPLE-KEY-0123456789&alt=sse")
	got := requireClean(t, r, "API key not valid: AIzaSyD-EXAMPLE-KEY-0123456789", "AIzaSyD-EXAMPLE-KEY-0123456789")
	require.Equal(t, "API key not valid: "+Mark, got)
	require.Equal(t, "alt sse", r.Clean("alt sse"), "a parameter not named like a credential is no secret")

	r = New().URL("http://h/v1/chat?api_key=abc%2Bdef%2F123&api-version=2024-02-01")
	requireClean(t, r, "bad abc+def/123 and abc%2Bdef%2F123", "abc+def/123", "abc%2Bdef%2F123")
	require.Equal(t, "2024-02-01", r.Clean("2024-02-01"))

	r = New().URL("https://user:hunter2-long@proxy.test:8080/v1")
	requireClean(t, r, "auth failed for hunter2-long", "hunter2-long")

	require.Same(t, r, r.URL("https://user:hunter2-long@proxy.test:8080/v1"), "a known URL teaches nothing")
	require.Nil(t, (*Redactor)(nil).URL("http://h/v1"), "nor does a URL without a query or user info")
}

// URLs in error text lose their query values and password, whatever the
// parameter's name, learned or not.
func TestURLsInText(t *testing.T) {
	t.Parallel()
	var r *Redactor
	err := `Post "http://127.0.0.1:9/v1/chat/completions?key=sk-live-123456&api-version=2024-02-01": dial tcp 127.0.0.1:9: connect: connection refused`
	require.Equal(t, `Post "http://127.0.0.1:9/v1/chat/completions?key=REDACTED&api-version=REDACTED": dial tcp 127.0.0.1:9: connect: connection refused`,
		r.Clean(err))
	require.Equal(t, "see https://u:REDACTED@h.test/a?x=REDACTED#REDACTED.", r.Clean("see https://u:pw@h.test/a?x=1#frag."),
		"trailing punctuation stays")
	require.Equal(t, "GET wss://h/s?REDACTED&t=REDACTED;y=REDACTED", r.Clean("GET wss://h/s?tok&t=1;y=2"))
	require.Equal(t, "https://platform.openai.com/account/api-keys", r.Clean("https://platform.openai.com/account/api-keys"))
	require.Equal(t, "https://user@h/x", r.Clean("https://user@h/x"), "a user name alone is no secret")
	require.Equal(t, "http://h/v1?key=REDACTED", CleanURL("http://h/v1?key=sk-live-123456"))
	require.Equal(t, "u:REDACTED@localhost:8000/v1?key=REDACTED", CleanURL("u:pw@localhost:8000/v1?key=sk-live-123456"),
		"without a scheme too")
}

// Providers echo a refused key cut short; the echo of a known token is
// redacted, ordinary text is not.
func TestPartialEchoes(t *testing.T) {
	t.Parallel()
	r := New().Headers(map[string]string{"authorization": "Bearer " + token})
	for _, echo := range []string{
		"sk-proj-Ab3d********************************Xy4z", // OpenAI's
		"sk-proj-****Xy4z",
		"sk-proj-Ab3...y4z",
		"sk-pr…Xy4z",
		"••••••••Xy4z",
		"sk-proj-Ab3dEf6hI", // cut at a length limit, no mask: a third of the key or more
		"kLm2nOp5qRs8tUv1wXy4z",
	} {
		got := r.Clean("Incorrect API key provided: " + echo + ". Retry.")
		require.Equal(t, "Incorrect API key provided: "+Mark+". Retry.", got, echo)
	}
	for _, text := range []string{
		"Loading... done", "sk-...", "a ** b", "waiting…", "Xy4z", "Rate limit reached for gpt-4o-mini-2024-07-18",
		"sk-proj-****0000", "zzzz****Xy4z", "sk-proj-Ab3dEf6hI-other", // not this token's start and end
		"sk-proj-", "keys start with sk-proj-Ab", // a piece shorter than a third of the key: a kind's common prefix
	} {
		require.Equal(t, text, r.Clean(text), "ordinary text is kept: %q", text)
	}
	short := New().Key("short-key1") // too short for its pieces to mean anything
	require.Equal(t, "short-ke****", short.Clean("short-ke****"))
	require.Equal(t, Mark, short.Clean("short-key1"))
}

// Learning never changes the Redactor learnt from: a call's secrets stay in
// the call's.
func TestLearningIsImmutable(t *testing.T) {
	t.Parallel()
	client := New().Key(token)
	call := client.Headers(map[string]string{"X-Api-Key": "call-only-secret-0123"})
	require.NotSame(t, client, call)
	require.Equal(t, "call-only-secret-0123", client.Clean("call-only-secret-0123"))
	require.Equal(t, Mark, call.Clean("call-only-secret-0123"))
	require.Equal(t, Mark, call.Clean(token), "the call's knows the client's")
	require.Same(t, call, call.Headers(map[string]string{"X-Api-Key": "call-only-secret-0123", "Accept": "x"}))
	require.Same(t, client, client.Headers(nil))
}

func TestNilRedactor(t *testing.T) {
	t.Parallel()
	var r *Redactor
	require.Equal(t, "plain", r.Clean("plain"))
	require.Equal(t, Mark, r.Key(token).Clean(token))
	require.Zero(t, r.Secrets())
}

// One client's Redactor is cleaned with from every call's goroutine.
func TestConcurrentClean(t *testing.T) {
	t.Parallel()
	r := New().Key(token).Headers(map[string]string{"Authorization": "Bearer other-secret-token-42"})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				got := r.Clean(refusal(token) + " other-secret-token-42")
				if strings.Contains(got, token) || strings.Contains(got, "other-secret-token-42") {
					t.Error("a secret survived")
				}
			}
		})
	}
	wg.Wait()
}

// What a call pays for its Redactor when it adds no secret (the common
// case: no params headers, a query without a key such as Gemini's
// ?alt=sse), and what cleaning one provider's refusal costs.
func BenchmarkCallRedactor(b *testing.B) {
	client := New().Key(token).URL("https://generativelanguage.googleapis.com/v1beta")
	u := "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
	b.Run("learn nothing", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if client.Headers(nil).URL(u) != client {
				b.Fatal("a call that adds nothing got a new Redactor")
			}
		}
	})
	b.Run("clean a refusal", func(b *testing.B) {
		text := refusal(token)
		b.ReportAllocs()
		for b.Loop() {
			_ = client.Clean(text)
		}
	})
}
