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

func openAIUsage(u gjson.Result) *Usage {
	reasoning := nonNegInt(u, "completion_tokens_details.reasoning_tokens")
	if reasoning == 0 {
		reasoning = nonNegInt(u, "reasoning_tokens") // SGLang puts it at the top level
	}
	cached, reported := cachedCount(u, openAICachedPaths...)
	return &Usage{
		PromptTokens:     nonNegInt(u, "prompt_tokens"),
		CompletionTokens: nonNegInt(u, "completion_tokens"),
		CachedTokens:     cached,
		CachedReported:   reported,
		ReasoningTokens:  reasoning,
		TotalTokens:      nonNegInt(u, "total_tokens"),
	}
}
