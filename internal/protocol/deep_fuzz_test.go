package protocol

import (
	"errors"
	"strings"
	"testing"

	"github.com/llmstream/xk6-llmstream/internal/jsondepth"
)

// FuzzDeepNesting feeds every JSON decoder one event nested to any depth (up
// to about a million levels, in any mix of arrays and objects) around any
// payload. Whatever the depth, Decode returns, with a stack bounded by the
// limit; past the limit the event is refused as too deep, and within it the
// depth is never the reason.
func FuzzDeepNesting(f *testing.F) {
	f.Add(uint16(40), uint8(0), `{"choices":[]}`, uint8(0))
	f.Add(uint16(32), uint8(0xff), `"x"`, uint8(3))
	f.Add(uint16(65535), uint8(0x5a), `1`, uint8(5))
	f.Add(uint16(2), uint8(1), `]]]]`+strings.Repeat("[", 1000), uint8(7))
	var specs []*Spec
	for _, name := range Names() {
		if name == "sse" {
			continue // raw SSE: its data is not JSON
		}
		s, _ := Lookup(name)
		specs = append(specs, s)
	}
	f.Fuzz(func(t *testing.T, levels uint16, shape uint8, inner string, pick uint8) {
		spec := specs[int(pick)%len(specs)]
		data := nested(int(levels)*16, shape, inner)
		var d Delta
		err := spec.NewDecoder().Decode(Event{Data: data}, &d)
		switch {
		case !jsondepth.Within(data, jsondepth.Limit) && !errors.Is(err, jsondepth.ErrTooDeep):
			t.Fatalf("%s: an event nested past the limit was not refused as too deep: %v", spec.Name, err)
		case jsondepth.Within(data, jsondepth.Limit) && errors.Is(err, jsondepth.ErrTooDeep):
			t.Fatalf("%s: an event within the limit was refused as too deep", spec.Name)
		case err != nil && err.Error() == "":
			t.Fatal("a decode error must say what is wrong")
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
