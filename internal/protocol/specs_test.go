package protocol

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEverySpecIsComplete(t *testing.T) {
	t.Parallel()
	want := []string{"anthropic", "gemini", "llamacpp", "ollama", "openai-chat", "openai-completions", "openai-responses", "sse", "tgi"}
	require.Equal(t, want, Names())
	for _, name := range want {
		s, err := Lookup(name)
		require.NoError(t, err)
		require.NotNil(t, s.Path, name)
		require.NotNil(t, s.Prepare, name)
		require.NotNil(t, s.Headers, name)
		require.NotNil(t, s.NewDecoder, name)
		h := http.Header{}
		s.Headers(h, Request{APIKey: "k"})
		// Compression batches events in the compressor: every protocol refuses it.
		assert.Equal(t, "identity", h.Get("Accept-Encoding"), name)
		assert.NotEmpty(t, h.Get("Accept"), name)
	}
}

func TestPathsFollowTheBaseURLConvention(t *testing.T) {
	t.Parallel()
	cases := []struct {
		protocol string
		r        Request
		want     string
	}{
		{"openai-chat", Request{}, "/chat/completions"},
		{"openai-completions", Request{}, "/completions"},
		{"openai-responses", Request{}, "/responses"},
		{"anthropic", Request{}, "/messages"},
		{"ollama", Request{}, "/api/chat"},
		{"ollama", Request{PromptOnly: true}, "/api/generate"},
		{"gemini", Request{Model: "gemini-2.5-flash"}, "/models/gemini-2.5-flash:streamGenerateContent?alt=sse"},
		{"gemini", Request{Model: "models/gemini-2.5-pro"}, "/models/gemini-2.5-pro:streamGenerateContent?alt=sse"},
		{"gemini", Request{Model: "a/b c"}, "/models/a%2Fb%20c:streamGenerateContent?alt=sse"},
		{"tgi", Request{}, "/generate_stream"},
		{"llamacpp", Request{}, "/completion"},
		{"sse", Request{}, ""},
	}
	for _, c := range cases {
		s, err := Lookup(c.protocol)
		require.NoError(t, err)
		assert.Equal(t, c.want, s.Path(c.r), "%s %+v", c.protocol, c.r)
	}
}

func TestPromptOnly(t *testing.T) {
	t.Parallel()
	assert.True(t, PromptOnly(map[string]any{"prompt": "hi"}))
	assert.False(t, PromptOnly(map[string]any{"prompt": "hi", "messages": []any{}}))
	assert.False(t, PromptOnly(map[string]any{"messages": []any{}}))
}

func TestAuthHeaders(t *testing.T) {
	t.Parallel()
	get := func(name string, h http.Header) http.Header {
		s, err := Lookup(name)
		require.NoError(t, err)
		s.Headers(h, Request{APIKey: "sk-1"})
		return h
	}
	for _, name := range []string{"openai-chat", "openai-completions", "openai-responses", "ollama", "tgi", "llamacpp", "sse"} {
		assert.Equal(t, "Bearer sk-1", get(name, http.Header{}).Get("Authorization"), name)
	}
	a := get("anthropic", http.Header{})
	assert.Equal(t, "sk-1", a.Get("x-api-key"))
	assert.Empty(t, a.Get("Authorization"))
	assert.Equal(t, anthropicVersion, a.Get("anthropic-version"))
	// A version the caller chose is kept.
	a = get("anthropic", http.Header{"Anthropic-Version": {"2099-01-01"}})
	assert.Equal(t, "2099-01-01", a.Get("anthropic-version"))
	g := get("gemini", http.Header{})
	assert.Equal(t, "sk-1", g.Get("x-goog-api-key"))
	assert.Empty(t, g.Get("Authorization"))
	assert.Equal(t, "application/x-ndjson", get("ollama", http.Header{}).Get("Accept"))
	// No key, no auth header.
	s, _ := Lookup("openai-chat")
	h := http.Header{}
	s.Headers(h, Request{})
	assert.Empty(t, h.Get("Authorization"))
}

func TestPrepareNeverOverridesTheCaller(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"openai-chat", "openai-completions", "openai-responses", "anthropic", "ollama", "llamacpp"} {
		s, _ := Lookup(name)
		body := map[string]any{"stream": false, "model": "mine"}
		s.Prepare(body, Request{Model: "default"})
		assert.Equal(t, false, body["stream"], name)
		assert.Equal(t, "mine", body["model"], name)

		body = map[string]any{}
		s.Prepare(body, Request{Model: "default"})
		assert.Equal(t, true, body["stream"], name)
		assert.Equal(t, "default", body["model"], name)
	}
	responses, _ := Lookup("openai-responses")
	body := map[string]any{}
	responses.Prepare(body, Request{ContinuousUsage: true})
	assert.NotContains(t, body, "stream_options", "the Responses API rejects stream_options")

	tgi, _ := Lookup("tgi")
	body = map[string]any{"inputs": "x"}
	tgi.Prepare(body, Request{})
	assert.Equal(t, map[string]any{"details": true}, body["parameters"])
	body = map[string]any{"parameters": map[string]any{"details": false}}
	tgi.Prepare(body, Request{})
	assert.Equal(t, map[string]any{"details": false}, body["parameters"])

	for _, name := range []string{"gemini", "sse"} {
		s, _ := Lookup(name)
		body := map[string]any{"contents": []any{}}
		s.Prepare(body, Request{Model: "m"})
		assert.Equal(t, map[string]any{"contents": []any{}}, body, name)
	}
}

// Running output counts must not go back when a chunk omits a field (Gemini)
// or reports a smaller figure: stream.Call reads them as per-event totals.
func TestRunningCountsNeverGoBack(t *testing.T) {
	t.Parallel()
	g := &gemini{}
	var d Delta
	counts := []int64{}
	for _, data := range []string{
		`{"candidates":[{"content":{"parts":[{"text":"a"}]}}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2}}`,
		`{"candidates":[{"content":{"parts":[{"text":"b"}]}}],"usageMetadata":{"promptTokenCount":3}}`,
		`{"candidates":[{"content":{"parts":[{"text":"c"}]}}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":4}}`,
	} {
		d.Reset()
		require.NoError(t, g.Decode(Event{Data: data}, &d))
		require.True(t, d.UsageCumulative)
		counts = append(counts, d.Usage.CompletionTokens)
	}
	assert.Equal(t, []int64{2, 2, 4}, counts)

	l := &llamaCpp{}
	counts = counts[:0]
	for _, data := range []string{`{"content":"a","tokens_predicted":2}`, `{"content":"b","tokens_predicted":1}`, `{"content":"c","tokens_predicted":5}`} {
		d.Reset()
		require.NoError(t, l.Decode(Event{Data: data}, &d))
		counts = append(counts, d.Usage.CompletionTokens)
	}
	assert.Equal(t, []int64{2, 2, 5}, counts)
}

func TestHugeCountsDoNotWrap(t *testing.T) {
	t.Parallel()
	a := &anthropic{}
	var d Delta
	require.NoError(t, a.Decode(Event{Data: `{"type":"message_start","message":{"usage":{"input_tokens":9223372036854775807,"cache_read_input_tokens":9223372036854775807}}}`}, &d))
	assert.Positive(t, d.Usage.PromptTokens)
}

func TestNonObjectPayloadsAreDecodeErrors(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"openai-chat", "openai-completions", "openai-responses", "anthropic", "ollama", "gemini", "tgi", "llamacpp"} {
		s, _ := Lookup(name)
		for _, data := range []string{`"text"`, `42`, `null`, `[1]`, `{"a":`, `not json`} {
			var d Delta
			assert.Error(t, s.NewDecoder().Decode(Event{Data: data}, &d), "%s %q", name, data)
		}
	}
}
