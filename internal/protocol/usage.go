package protocol

import (
	"github.com/tidwall/gjson"

	"github.com/llmstream/xk6-llmstream/internal/jsonscan"
)

// Usage fields are read by family, not by one spelling: servers that speak
// the same protocol name the same figure differently, and a figure read
// under the wrong name would be reported as 0, a definite reading where
// there was none.

// openAICachedPaths are where OpenAI-compatible servers put the prompt's
// cached tokens: OpenAI, vLLM (--enable-prompt-tokens-details), SGLang
// (--enable-cache-report) and llama.cpp in prompt_tokens_details; the llm-d
// inference simulator in prompt_tokens_detail (singular); DeepSeek at the
// top level as prompt_cache_hit_tokens.
var openAICachedPaths = []string{ //nolint:gochecknoglobals // read-only table
	"prompt_tokens_details.cached_tokens",
	"prompt_tokens_detail.cached_tokens",
	"prompt_cache_hit_tokens",
}

// cachedCount reads the first of paths that holds a number: the count and
// whether the server sent one at all (null, absent or text is no reading).
func cachedCount(u gjson.Result, paths ...string) (int64, bool) {
	for _, p := range paths {
		if v := u.Get(p); v.Type == gjson.Number {
			return max(v.Int(), 0), true
		}
	}
	return 0, false
}

// openAIUsage reads an OpenAI-compatible usage object in one pass over its
// keys: a Get per figure rescanned it from its start, eight times, on every
// answer's last event (on every event under vLLM's continuous usage). Each
// figure is the value Get would find: the first of its key; for a nested
// one, in the first object of its key that has it.
func openAIUsage(u gjson.Result) Usage {
	var f usageFields
	u.ForEach(func(k, v gjson.Result) bool {
		f.member(k.Str, v.Raw, gjsonMember)
		return true
	})
	return f.usage()
}

// usageFields are the raw JSON values openAIUsage reads ("" where none was
// found), each the first of its key.
type usageFields struct {
	prompt, completion, total, reasoning, topReasoning string
	cached                                             [3]string // openAICachedPaths, in order
}

// member takes the usage object's member key, whose value is raw; in reads
// the raw value of an object's key ("" when it has none).
func (f *usageFields) member(key, raw string, in func(obj, key string) string) {
	switch key {
	case "prompt_tokens":
		firstOf(&f.prompt, raw)
	case "completion_tokens":
		firstOf(&f.completion, raw)
	case "total_tokens":
		firstOf(&f.total, raw)
	case "reasoning_tokens":
		firstOf(&f.topReasoning, raw)
	case "completion_tokens_details":
		firstIn(&f.reasoning, raw, "reasoning_tokens", in)
	case "prompt_tokens_details":
		firstIn(&f.cached[0], raw, "cached_tokens", in)
	case "prompt_tokens_detail":
		firstIn(&f.cached[1], raw, "cached_tokens", in)
	case "prompt_cache_hit_tokens":
		firstOf(&f.cached[2], raw)
	}
}

// usage is the figures the values say.
func (f *usageFields) usage() Usage {
	r := nonNeg(f.reasoning)
	if r == 0 {
		r = nonNeg(f.topReasoning) // SGLang puts it at the top level
	}
	out := Usage{
		PromptTokens:     nonNeg(f.prompt),
		CompletionTokens: nonNeg(f.completion),
		ReasoningTokens:  r,
		TotalTokens:      nonNeg(f.total),
	}
	for _, c := range f.cached {
		if isNumber(c) {
			out.CachedTokens, out.CachedReported = nonNeg(c), true
			break
		}
	}
	return out
}

// firstOf keeps raw in *dst unless a value is there already.
func firstOf(dst *string, raw string) {
	if *dst == "" {
		*dst = raw
	}
}

// firstIn keeps the value of key in raw, an object that has it, in *dst
// unless a value is there already.
func firstIn(dst *string, raw, key string, in func(obj, key string) string) {
	if *dst == "" && raw != "" && raw[0] == '{' {
		*dst = in(raw, key)
	}
}

// gjsonMember is the raw value of obj's key, as gjson finds it.
func gjsonMember(obj, key string) string { return gjson.Get(obj, key).Raw }

// isNumber says whether raw is a JSON number (null, text or absent is no
// reading).
func isNumber(raw string) bool {
	return raw != "" && (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9'))
}

// nonNeg is nonNegInt of a raw value found ("" is 0): gjson's integer of
// it (a string's number, true's 1), read without gjson for the plain small
// integers servers send.
func nonNeg(raw string) int64 {
	if raw == "" {
		return 0
	}
	if end, n, ok := jsonscan.SmallInt(raw, 0); ok && end == len(raw) {
		return int64(max(n, 0))
	}
	return max(gjson.Parse(raw).Int(), 0)
}
