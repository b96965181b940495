package record

import (
	"reflect"
	"testing"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/embed"
	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// The result read key by key is the result built whole: the same keys, the
// same values, and nothing for a key it does not have, for a chat call and
// an embeddings call.
func TestJSValuesAreTheJSObjects(t *testing.T) {
	t0 := time.Unix(1000, 0)
	chat := &Call{Result: &stream.Result{OK: true, Start: t0, End: t0.Add(time.Second), Text: "hi",
		TTFT: measure.Of(100 * time.Millisecond), E2E: measure.Of(time.Second)}, Due: t0.Add(-time.Millisecond)}
	r := &embed.Result{Op: embed.OpEmbed, OK: true, Start: t0, End: t0.Add(50 * time.Millisecond),
		Duration: measure.Of(50 * time.Millisecond), TTFB: measure.Of(30 * time.Millisecond), Parse: measure.Of(time.Millisecond), Items: 1}
	emb := &Call{Result: r.StreamResult(), Retrieval: r}
	for _, c := range []*Call{chat, emb} {
		whole := c.JS()
		if len(c.JSKeys()) != len(whole) {
			t.Fatalf("%d keys read one by one, %d in the object", len(c.JSKeys()), len(whole))
		}
		for _, k := range c.JSKeys() {
			v, ok := c.JSValue(k)
			if !ok || !reflect.DeepEqual(v, whole[k]) {
				t.Fatalf("%s: %#v (%v), the object has %#v", k, v, ok, whole[k])
			}
		}
		if _, ok := c.JSValue("noSuchKey"); ok {
			t.Fatal("a key the result does not have has a value")
		}
	}
}
