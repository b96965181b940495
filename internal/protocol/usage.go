package protocol

import "github.com/tidwall/gjson"

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
	var prompt, completion, total, reasoning, topReasoning gjson.Result
	var cached [3]gjson.Result // openAICachedPaths, in order
	u.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "prompt_tokens":
			firstOf(&prompt, v)
		case "completion_tokens":
			firstOf(&completion, v)
		case "total_tokens":
			firstOf(&total, v)
		case "reasoning_tokens":
			firstOf(&topReasoning, v)
		case "completion_tokens_details":
			firstIn(&reasoning, v, "reasoning_tokens")
		case "prompt_tokens_details":
			firstIn(&cached[0], v, "cached_tokens")
		case "prompt_tokens_detail":
			firstIn(&cached[1], v, "cached_tokens")
		case "prompt_cache_hit_tokens":
			firstOf(&cached[2], v)
		}
		return true
	})
	r := nonNeg(reasoning)
	if r == 0 {
		r = nonNeg(topReasoning) // SGLang puts it at the top level
	}
	out := Usage{
		PromptTokens:     nonNeg(prompt),
		CompletionTokens: nonNeg(completion),
		ReasoningTokens:  r,
		TotalTokens:      nonNeg(total),
	}
	for _, c := range cached {
		if c.Type == gjson.Number {
			out.CachedTokens, out.CachedReported = max(c.Int(), 0), true
			break
		}
	}
	return out
}

// firstOf keeps v in *dst unless a value is there already.
func firstOf(dst *gjson.Result, v gjson.Result) {
	if !dst.Exists() {
		*dst = v
	}
}

// firstIn keeps v's key in *dst, v being an object that has it, unless a
// value is there already.
func firstIn(dst *gjson.Result, v gjson.Result, key string) {
	if !dst.Exists() && v.IsObject() {
		firstOf(dst, v.Get(key))
	}
}

// nonNeg is nonNegInt of a value found.
func nonNeg(v gjson.Result) int64 { return max(v.Int(), 0) }
