package protocol

import (
	"testing"

	"github.com/tidwall/gjson"
)

// usageSeeds are usage objects with the format's quirks: duplicate keys,
// figures as text, null or an array where an object goes, fractions.
var usageSeeds = []string{ //nolint:gochecknoglobals // fuzz seeds
	`{"prompt_tokens":1,"completion_tokens":4,"total_tokens":5,"prompt_tokens_details":{"cached_tokens":0}}`,
	`{"prompt_tokens":"7","prompt_tokens":3,"completion_tokens_details":null,"completion_tokens_details":{"reasoning_tokens":2}}`,
	`{"prompt_tokens_details":{"x":1},"prompt_tokens_details":{"cached_tokens":"9"},"prompt_tokens_detail":{"cached_tokens":4}}`,
	`{"reasoning_tokens":-3,"completion_tokens_details":{"reasoning_tokens":0},"prompt_cache_hit_tokens":12.5}`,
	`{"total_tokens":true,"completion_tokens":1e3,"prompt_tokens_details":[{"cached_tokens":1}]}`,
}

// FuzzOpenAIUsageAgreesWithGet: the one-pass reading of a usage object
// finds what a Get per figure finds, duplicate keys and odd types included.
func FuzzOpenAIUsageAgreesWithGet(f *testing.F) {
	for _, s := range usageSeeds {
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

// FuzzScanUsageAgreesWithGjson: the jsonscan reading of a chunk's usage
// finds what the gjson reading finds, or hands the object to it.
func FuzzScanUsageAgreesWithGjson(f *testing.F) {
	for _, s := range append(usageSeeds[:len(usageSeeds):len(usageSeeds)],
		`{"prompt_tokens_details":{"cached\u005ftokens":3,"cached_tokens":5}}`,
		`{"prompt\u005ftokens":3}`,
		`{ "prompt_tokens" : 12 , "completion_tokens":-0,"total_tokens":9999999999}`,
		`{}`,
	) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !gjson.Valid(s) || s == "" || s[0] != '{' {
			return // the chunk's scan hands it only a valid object
		}
		got, ok := scanOpenAIUsage(s)
		if !ok {
			return
		}
		if want := openAIUsage(gjson.Parse(s)); got != want {
			t.Fatalf("%s: %+v, want %+v", s, got, want)
		}
	})
}

// TestScanUsageReadsWhatServersSend: the shapes servers send are read by
// the scan, not handed back.
func TestScanUsageReadsWhatServersSend(t *testing.T) {
	for _, s := range []string{
		`{"prompt_tokens":12,"completion_tokens":4,"total_tokens":16,"prompt_tokens_details":{"cached_tokens":0}}`, // llm-sim, vLLM
		`{"prompt_tokens":26,"total_tokens":40,"completion_tokens":14}`,                                            // vLLM continuous usage
		`{"prompt_tokens":9,"completion_tokens":30,"total_tokens":39,"completion_tokens_details":{"reasoning_tokens":12},"reasoning_tokens":12}`,
		`{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7,"prompt_cache_hit_tokens":3,"prompt_cache_miss_tokens":2}`, // DeepSeek
	} {
		got, ok := scanOpenAIUsage(s)
		if !ok {
			t.Errorf("%s: handed back", s)
			continue
		}
		if want := openAIUsage(gjson.Parse(s)); got != want {
			t.Errorf("%s: %+v, want %+v", s, got, want)
		}
	}
}
