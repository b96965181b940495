package calls

import (
	"testing"
	"unsafe"

	"go.k6.io/k6/metrics"

	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// One client's calls share its memo: a call that ends like the last one
// gets the last one's tag set, a call that ends otherwise (another status,
// a failure, a later attempt, other call tags) gets its own tags, never the
// kept ones, and each call's request id stays its own metadata.
func TestAttemptTagsFollowEachCallsEnd(t *testing.T) {
	reg := metrics.NewRegistry()
	memo := &tagMemo{}
	route := func(scenario string) *route {
		r := testRoute(reg, record.Origin{Name: "c", Route: routePrimary, Protocol: "openai", Model: "m", Scenario: scenario})
		r.Info.tagMemo = memo
		return r
	}
	ok := func(id string) *stream.Result { return &stream.Result{OK: true, Status: 200, RequestID: id} }
	first, firstMeta := attemptTags(&attempt{Route: route("a"), Result: ok("r1")}, 1)
	again, againMeta := attemptTags(&attempt{Route: route("a"), Result: ok("r2")}, 1)
	if again != first {
		t.Errorf("a call that ended alike got a new tag set")
	}
	if firstMeta["request_id"] != "r1" || againMeta["request_id"] != "r2" {
		t.Errorf("request ids %q %q, want r1 r2", firstMeta["request_id"], againMeta["request_id"])
	}
	cases := []struct {
		name   string
		a      *attempt
		n      int
		tag, v string
	}{
		{"other scenario", &attempt{Route: route("b"), Result: ok("")}, 1, "scenario", "b"},
		{"failed", &attempt{Route: route("a"), Result: &stream.Result{Status: 503, Err: &stream.Error{Type: stream.ErrHTTP5xx}}}, 1,
			"error_type", string(stream.ErrHTTP5xx)},
		{"retried", &attempt{Route: route("a"), Result: ok("")}, 3, "attempt", "3"},
		{"back to the first", &attempt{Route: route("a"), Result: ok("")}, 1, "status", "200"},
	}
	for _, c := range cases {
		tags, _ := attemptTags(c.a, c.n)
		if got, set := tags.Get(c.tag); !set || got != c.v {
			t.Errorf("%s: tag %s = %q (%v), want %q", c.name, c.tag, got, set, c.v)
		}
		if c.tag != "error_type" {
			if _, set := tags.Get("error_type"); set {
				t.Errorf("%s: an answered call carries error_type", c.name)
			}
		}
		if c.tag != "attempt" {
			if _, set := tags.Get("attempt"); set {
				t.Errorf("%s: a first attempt carries attempt", c.name)
			}
		}
	}
}

// A response's protocol goes into the memo's key as the one constant
// string of its kind, whatever string net/http made it, so comparing keys
// reads no string's bytes; another protocol is kept as it came, and a
// call's proto tag is its response's either way.
func TestKnownProtoIsTheConstant(t *testing.T) {
	for _, p := range []string{"HTTP/1.1", "HTTP/2.0", "HTTP/1.0"} {
		fresh := string([]byte(p)) // a string of its own, as each response's
		if got := knownProto(fresh); got != p || unsafe.StringData(got) != unsafe.StringData(knownProto(p)) {
			t.Errorf("%s: got %q at %p, want the constant", p, got, unsafe.StringData(got))
		}
	}
	if got := knownProto("HTTP/3.0"); got != "HTTP/3.0" {
		t.Errorf("another protocol became %q", got)
	}
	reg := metrics.NewRegistry()
	r := testRoute(reg, record.Origin{Name: "c", Route: routePrimary, Protocol: "openai"})
	r.Info.tagMemo = &tagMemo{}
	for _, p := range []string{"HTTP/2.0", "SPDY/3"} {
		tags, _ := attemptTags(&attempt{Route: r, Result: &stream.Result{OK: true, Status: 200, Proto: string([]byte(p))}}, 1)
		if got, _ := tags.Get("proto"); got != p {
			t.Errorf("proto tag %q, want %q", got, p)
		}
	}
}
