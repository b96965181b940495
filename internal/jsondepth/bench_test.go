package jsondepth

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// The pre-scan's cost beside the validator it guards, on the two shapes the
// client reads most: an embeddings answer (32 vectors of 1024 numbers) and
// a streamed chat chunk.
func BenchmarkPreScanBesideValidator(b *testing.B) {
	var vec strings.Builder
	for i := range 1024 {
		if i > 0 {
			vec.WriteByte(',')
		}
		fmt.Fprintf(&vec, "%.9f", float64(i)/1e4-0.05)
	}
	var emb strings.Builder
	emb.WriteString(`{"object":"list","data":[`)
	for i := range 32 {
		if i > 0 {
			emb.WriteByte(',')
		}
		fmt.Fprintf(&emb, `{"object":"embedding","index":%d,"embedding":[%s]}`, i, vec.String())
	}
	emb.WriteString(`],"model":"m","usage":{"prompt_tokens":64,"total_tokens":64}}`)
	chunk := `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" word"},"logprobs":null,"finish_reason":null}]}`
	for _, c := range []struct{ name, data string }{{"embeddings", emb.String()}, {"chat-chunk", chunk}} {
		b.Run(c.name+"/within", func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			for b.Loop() {
				if !Within(c.data, Limit) {
					b.Fatal("refused")
				}
			}
		})
		b.Run(c.name+"/gjson.Valid", func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			for b.Loop() {
				if !gjson.Valid(c.data) {
					b.Fatal("invalid")
				}
			}
		})
	}
}
