package protocol

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every protocol with finish reasons names its output limit's field and its
// length finish, so an answer that reached the limit without a named finish
// can be called what the protocol calls it.
func TestMaxTokensPerProtocol(t *testing.T) {
	t.Parallel()
	cases := []struct {
		protocol string
		body     string
		want     int64
	}{
		{"openai-chat", `{"max_tokens":64}`, 64},
		{"openai-chat", `{"max_tokens":64,"max_completion_tokens":32}`, 32},
		{"openai-chat", `{}`, 0},
		{"openai-completions", `{"max_tokens":16}`, 16},
		{"openai-responses", `{"max_output_tokens":100}`, 100},
		{"anthropic", `{"max_tokens":1024}`, 1024},
		{"gemini", `{"generationConfig":{"maxOutputTokens":50}}`, 50},
		{"ollama", `{"options":{"num_predict":40}}`, 40},
		{"llamacpp", `{"n_predict":12}`, 12},
		{"tgi", `{"parameters":{"max_new_tokens":20}}`, 20},
		// Not a token count a server enforces: no limit.
		{"openai-chat", `{"max_tokens":"64"}`, 0},
		{"openai-chat", `{"max_tokens":-1}`, 0},
		{"openai-chat", `{"max_tokens":2.5}`, 0},
		{"ollama", `{"options":7}`, 0},
	}
	for _, c := range cases {
		spec, err := Lookup(c.protocol)
		require.NoError(t, err)
		require.NotNil(t, spec.MaxTokens, c.protocol)
		require.NotEmpty(t, spec.LengthFinish, c.protocol)
		var body map[string]any
		require.NoError(t, json.Unmarshal([]byte(c.body), &body))
		assert.Equal(t, c.want, spec.MaxTokens(body), "%s %s", c.protocol, c.body)
	}
	sse, _ := Lookup("sse")
	assert.Nil(t, sse.MaxTokens, "raw events have no output limit")
	// The JS runtime hands integers over as int64.
	chat, _ := Lookup("openai-chat")
	assert.Equal(t, int64(8), chat.MaxTokens(map[string]any{"max_tokens": int64(8)}))
	assert.Equal(t, int64(8), chat.MaxTokens(map[string]any{"max_tokens": 8}))
}

// A limit set for the caller goes where the protocol reads it, never over
// one the body sets, and without writing to an object the body shares.
func TestSetMaxTokensWhereTheProtocolReadsIt(t *testing.T) {
	t.Parallel()
	for _, name := range Names() {
		spec, _ := Lookup(name)
		if spec.OutputLimitField == "" {
			body := map[string]any{}
			spec.SetMaxTokens(body, 7)
			assert.Empty(t, body, "%s has no output limit to set", name)
			continue
		}
		body := map[string]any{}
		spec.SetMaxTokens(body, 7)
		assert.Equal(t, int64(7), spec.MaxTokens(body), name)
		spec.SetMaxTokens(body, 9)
		assert.Equal(t, int64(7), spec.MaxTokens(body), "%s: the body's own limit stays", name)
	}
	ollama, _ := Lookup("ollama")
	shared := map[string]any{"temperature": 0.5}
	body := map[string]any{"options": shared}
	ollama.SetMaxTokens(body, 7)
	assert.Equal(t, map[string]any{"temperature": 0.5}, shared, "the caller's options object is not written")
	assert.Equal(t, map[string]any{"temperature": 0.5, "num_predict": int64(7)}, body["options"])
}

// A terminal event that names no finish completes the answer and leaves its
// finish unknown: no decoder guesses "stop".
func TestTerminalWithoutReasonNamesNoFinish(t *testing.T) {
	t.Parallel()
	for protocol, data := range map[string]string{
		"ollama":   `{"response":"","done":true,"eval_count":3}`,
		"llamacpp": `{"content":"","stop":true,"tokens_predicted":3}`,
		"tgi":      `{"token":{"text":"!"},"generated_text":"Hi!"}`,
	} {
		spec, _ := Lookup(protocol)
		var d Delta
		require.NoError(t, spec.NewDecoder().Decode(Event{Data: data}, &d), protocol)
		assert.True(t, d.Terminal, protocol)
		assert.Empty(t, d.FinishReason, protocol)
	}
}
