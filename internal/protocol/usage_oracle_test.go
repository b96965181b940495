package protocol

import (
	"testing"

	"github.com/tidwall/gjson"
)

// FuzzOpenAIUsageAgreesWithGet: the one-pass reading of a usage object
// finds what a Get per figure finds, duplicate keys and odd types included.
func FuzzOpenAIUsageAgreesWithGet(f *testing.F) {
	for _, s := range []string{
		`{"prompt_tokens":1,"completion_tokens":4,"total_tokens":5,"prompt_tokens_details":{"cached_tokens":0}}`,
		`{"prompt_tokens":"7","prompt_tokens":3,"completion_tokens_details":null,"completion_tokens_details":{"reasoning_tokens":2}}`,
		`{"prompt_tokens_details":{"x":1},"prompt_tokens_details":{"cached_tokens":"9"},"prompt_tokens_detail":{"cached_tokens":4}}`,
		`{"reasoning_tokens":-3,"completion_tokens_details":{"reasoning_tokens":0},"prompt_cache_hit_tokens":12.5}`,
		`{"total_tokens":true,"completion_tokens":1e3,"prompt_tokens_details":[{"cached_tokens":1}]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !gjson.Valid(s) {
			return
		}
		u := gjson.Parse(s)
		if !u.IsObject() {
			return
		}
		if got, want := openAIUsage(u), *openAIUsageByGet(u); got != want {
			t.Fatalf("%s: %+v, want %+v", s, got, want)
		}
	})
}

// openAIUsageByGet is the reading by one Get per figure, the fuzz oracle.
func openAIUsageByGet(u gjson.Result) *Usage {
	reasoning := nonNegInt(u, "completion_tokens_details.reasoning_tokens")
	if reasoning == 0 {
		reasoning = nonNegInt(u, "reasoning_tokens")
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
