package embed

import (
	"errors"
	"strings"
	"testing"

	"github.com/llmstream/xk6-llmstream/internal/jsondepth"
)

// FuzzDeepAnswer feeds every embeddings and rerank parser, and the reader
// of error answers, one body nested to any depth (up to about a million
// levels, arrays and objects mixed) around any payload: whatever the depth
// they return; past the limit the answer is refused as too deep (an error
// answer has no message), within it the depth is never the reason.
func FuzzDeepAnswer(f *testing.F) {
	f.Add(uint16(1), uint8(0), `[1,2]`, uint8(0))
	f.Add(uint16(33), uint8(0xff), `{"data":[]}`, uint8(1))
	f.Add(uint16(65535), uint8(0x96), `"x"`, uint8(4))
	parsers := make([]func([]byte) error, 0, len(Names())+len(RerankNames()))
	for _, name := range Names() {
		api, _ := Lookup(name)
		parsers = append(parsers, func(b []byte) error { _, err := api.Parse(b, false); return err })
	}
	for _, name := range RerankNames() {
		api, _ := LookupRerank(name)
		req := &RerankRequest{Query: "q", Documents: []string{"a", "b"}}
		parsers = append(parsers, func(b []byte) error { _, err := api.Parse(b, req); return err })
	}
	for i := range parsers { // every parser past the limit (640 levels)
		f.Add(uint16(40), uint8(0x33), `[]`, uint8(i))
	}
	f.Fuzz(func(t *testing.T, levels uint16, shape uint8, inner string, pick uint8) {
		body := []byte(nested(int(levels)*16, shape, inner))
		err := parsers[int(pick)%len(parsers)](body)
		within := jsondepth.Within(body, jsondepth.Limit)
		switch {
		case !within && !errors.Is(err, jsondepth.ErrTooDeep):
			t.Fatalf("an answer nested past the limit was not refused as too deep: %v", err)
		case within && errors.Is(err, jsondepth.ErrTooDeep):
			t.Fatal("an answer within the limit was refused as too deep")
		case !within && ErrorMessage(body) != "":
			t.Fatal("an error answer nested past the limit gave a message")
		}
	})
}

// nested wraps inner in n levels, each an array or an object as the bits of
// shape say (cycling every 8 levels), closed again after it.
func nested(n int, shape uint8, inner string) string {
	var b strings.Builder
	b.Grow(7*n + len(inner))
	for i := range n {
		if shape>>(i%8)&1 == 0 {
			b.WriteByte('[')
		} else {
			b.WriteString(`{"k":`)
		}
	}
	b.WriteString(inner)
	for i := n - 1; i >= 0; i-- {
		if shape>>(i%8)&1 == 0 {
			b.WriteByte(']')
		} else {
			b.WriteByte('}')
		}
	}
	return b.String()
}
