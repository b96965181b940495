package protocol

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The cached-token count is read under every spelling of the OpenAI family;
// a usage object with none of them is no reading (CachedReported false), and
// only a count the server sent, 0 included, is one.
func TestOpenAICachedTokensByFamily(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, usage string
		cached      int64
		reported    bool
	}{
		{"openai, vllm", `{"prompt_tokens":10,"prompt_tokens_details":{"cached_tokens":8}}`, 8, true},
		{"a miss said", `{"prompt_tokens":10,"prompt_tokens_details":{"cached_tokens":0}}`, 0, true},
		{"llm-d simulator", `{"prompt_tokens":251,"prompt_tokens_detail":{"cached_tokens":240}}`, 240, true},
		{"deepseek", `{"prompt_tokens":80,"prompt_cache_hit_tokens":64,"prompt_cache_miss_tokens":16}`, 64, true},
		{"no field", `{"prompt_tokens":10,"completion_tokens":2}`, 0, false},
		{"details without the count", `{"prompt_tokens":10,"prompt_tokens_details":{"audio_tokens":0}}`, 0, false},
		{"null details", `{"prompt_tokens":10,"prompt_tokens_details":null}`, 0, false},
		{"null count", `{"prompt_tokens":10,"prompt_tokens_details":{"cached_tokens":null}}`, 0, false},
		{"negative count", `{"prompt_tokens":10,"prompt_tokens_details":{"cached_tokens":-3}}`, 0, true},
	}
	for _, c := range cases {
		var d Delta
		spec, _ := Lookup("openai-chat")
		data := `{"choices":[],"usage":` + c.usage + `}`
		require.NoError(t, spec.NewDecoder().Decode(Event{Data: data}, &d), c.name)
		require.NotNil(t, d.Usage, c.name)
		assert.Equal(t, c.cached, d.Usage.CachedTokens, c.name)
		assert.Equal(t, c.reported, d.Usage.CachedReported, c.name)
	}
}

// Each protocol's own cached field: present is a reading, absent is none.
// Gemini is the exception: its JSON leaves zero counts out (proto3), so a
// usageMetadata without cachedContentTokenCount says nothing was cached.
func TestCachedReportedPerProtocol(t *testing.T) {
	t.Parallel()
	cases := []struct {
		protocol, data string
		reported       bool
	}{
		{"anthropic", `{"type":"message_start","message":{"usage":{"input_tokens":5,"cache_read_input_tokens":0,"output_tokens":1}}}`, true},
		{"anthropic", `{"type":"message_start","message":{"usage":{"input_tokens":5,"output_tokens":1}}}`, false},
		{"openai-responses", `{"type":"response.completed","response":{"usage":{"input_tokens":5,"input_tokens_details":{"cached_tokens":0},"output_tokens":1}}}`, true},
		{"openai-responses", `{"type":"response.completed","response":{"usage":{"input_tokens":5,"output_tokens":1}}}`, false},
		{"ollama", `{"response":"","done":true,"done_reason":"stop","prompt_eval_count":5,"eval_count":1,"prompt_eval_cached_count":0}`, true},
		{"ollama", `{"response":"","done":true,"done_reason":"stop","prompt_eval_count":5,"eval_count":1}`, false},
		{"llamacpp", `{"content":"","stop":true,"stop_type":"eos","tokens_predicted":1,"tokens_evaluated":5,"timings":{"cache_n":0}}`, true},
		{"llamacpp", `{"content":"","stop":true,"stop_type":"eos","tokens_predicted":1,"tokens_evaluated":5}`, false},
		{"tgi", `{"token":{"text":"","special":true},"generated_text":"x","details":{"finish_reason":"length","generated_tokens":1,"input_length":5}}`, false},
		{"gemini", `{"candidates":[{"content":{"parts":[{"text":"x"}]}}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":1}}`, true},
	}
	for _, c := range cases {
		spec, err := Lookup(c.protocol)
		require.NoError(t, err)
		var d Delta
		require.NoError(t, spec.NewDecoder().Decode(Event{Data: c.data}, &d), c.protocol)
		require.NotNil(t, d.Usage, "%s %s", c.protocol, c.data)
		assert.Equal(t, c.reported, d.Usage.CachedReported, "%s %s", c.protocol, c.data)
	}
}
