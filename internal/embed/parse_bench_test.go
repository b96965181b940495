package embed

import (
	"strconv"
	"testing"
)

// simLikeAnswer is an OpenAI embeddings answer shaped as llm-sim's (feature
// hashing: 1024 dimensions, mostly zeros), the body bench-calls reads.
func simLikeAnswer() []byte {
	b := []byte(`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[`)
	for i := range 1024 {
		if i > 0 {
			b = append(b, ',')
		}
		if i%100 == 7 {
			b = strconv.AppendFloat(b, 0.33333334, 'g', 8, 32)
		} else {
			b = append(b, '0')
		}
	}
	return append(b, `]}],"model":"sim-fast","usage":{"prompt_tokens":12,"total_tokens":12}}`...)
}

// BenchmarkParseOpenAI is the parse of one answer at batch 1, unkept: what
// every embed() call without keepVectors pays on the event loop.
func BenchmarkParseOpenAI(b *testing.B) {
	body := simLikeAnswer()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		a, err := parseOpenAI(body, false)
		if err != nil || a.Count != 1 || a.Dimension != 1024 {
			b.Fatal(a, err)
		}
	}
}
