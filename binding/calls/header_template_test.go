package calls

import (
	"testing"

	"go.k6.io/k6/lib"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/protocol"
)

// A client's calls get headers from its last set only while what they are
// built from is the same: a new key or model is new headers, a call's own
// headers stay its own, and a call changing its headers as the planners do
// (a clone, then an idempotency key, a GET's Content-Type removed) leaves
// the next call's alone.
func TestCallHeadersFollowEachCall(t *testing.T) {
	spec, err := protocol.Lookup("openai-chat")
	if err != nil {
		t.Fatal(err)
	}
	c := &Client{opts: &config.Client{Headers: map[string]string{"X-Client": "c"}}}
	st := &lib.State{}
	call := func(key string, own map[string]string) map[string]string {
		h := c.headers(st, spec, protocol.Request{Model: "m", APIKey: key}, &config.Call{Headers: own})
		got := map[string]string{}
		for k := range h {
			got[k] = h.Get(k)
		}
		h = h.Clone() // the set is shared (header_template.go)
		h.Del("Content-Type")
		h.Set("Idempotency-Key", "k1")
		return got
	}
	first := call("k1", map[string]string{"X-Call": "1"})
	second := call("k1", nil)
	third := call("k2", nil)
	fourth := call("k2", nil)
	if fourth["Content-Type"] != "application/json" || fourth["Idempotency-Key"] != "" {
		t.Errorf("a call's changes to its copy reached the next call's headers %v", fourth)
	}
	if first["Authorization"] != "Bearer k1" || first["X-Call"] != "1" || first["X-Client"] != "c" {
		t.Errorf("first call's headers %v", first)
	}
	if second["X-Call"] != "" || second["Idempotency-Key"] != "" || second["Content-Type"] != "application/json" {
		t.Errorf("second call's headers %v carry the first call's", second)
	}
	if second["Authorization"] != "Bearer k1" || second["X-Client"] != "c" {
		t.Errorf("second call's headers %v", second)
	}
	if third["Authorization"] != "Bearer k2" {
		t.Errorf("a call with another key sent %q", third["Authorization"])
	}
}
