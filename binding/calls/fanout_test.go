package calls

import (
	"testing"
	"time"

	"go.k6.io/k6/metrics"

	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// testRoute is a route whose info carries origin and the scenario tag.
func testRoute(reg *metrics.Registry, origin record.Origin) *route {
	tags := metrics.TagsAndMeta{Tags: reg.RootTagSet().With("scenario", origin.Scenario)}
	return &route{Info: &routeInfo{Origin: origin, tags: tags, tagRoute: true}}
}

// The record of a call that fell back carries the fallback route's origin
// whole, each attempt names its own route, and the samples' tags say what
// that origin says: the identity is the plan's, never copied field by field.
func TestRecordCarriesTheEndingRoutesOrigin(t *testing.T) {
	reg := metrics.NewRegistry()
	start := time.Unix(1_700_000_000, 0)
	primary := testRoute(reg, record.Origin{Name: "big", Route: routePrimary, Protocol: "openai", Model: "m-big",
		Category: "chat", Scenario: "load", Turn: 2, RequestBytes: 120})
	fallback := testRoute(reg, record.Origin{Name: "small", Route: routeFallback, Protocol: "anthropic", Model: "m-small",
		Category: "chat", Scenario: "load", ItemID: "q7", SharedPrefix: true, Phase: "", TestStart: start,
		Rate: 4, Turn: 2, RequestBytes: 130, Images: 1, ImageBytes: 900, ImagePixels: 64})
	failed := &stream.Result{Err: &stream.Error{Type: stream.ErrHTTP5xx}, Status: 503}
	answered := &stream.Result{OK: true, Status: 200, TTFB: measure.Of(time.Millisecond), TTFT: measure.Of(2 * time.Millisecond),
		TTFTAnswer: measure.Of(2 * time.Millisecond), E2E: measure.Of(5 * time.Millisecond)}
	o := &outcome{Attempts: []attempt{
		{Route: primary, Result: failed}, {Route: fallback, Result: answered},
	}}

	rec := callRecord(o, callLoad{active: 3, vus: 2})
	if rec.Origin != fallback.Info.Origin {
		t.Fatalf("record origin %+v, want the fallback's %+v", rec.Origin, fallback.Info.Origin)
	}
	if a := rec.Attempts[0]; a.Name != "big" || a.Route != routePrimary || a.Result != failed {
		t.Fatalf("first attempt %+v, want the primary's", a)
	}
	if rec.Origin.Model != "m-small" || rec.Result.Model != "" {
		t.Fatalf("asked model %q, server's %q: the two must stay apart", rec.Origin.Model, rec.Result.Model)
	}
	if v, ok := rec.Tag("scenario"); !ok || v != "load" {
		t.Fatalf("scenario tag %q %v", v, ok)
	}

	tags, _ := attemptTags(o.Final(), 2)
	for k, want := range map[string]string{"name": "small", "protocol": "anthropic", "model": "m-small", "route": routeFallback, "attempt": "2"} {
		if got, _ := tags.Get(k); got != want {
			t.Errorf("tag %s = %q, want %q", k, got, want)
		}
	}
	tags, _ = attemptTags(&o.Attempts[0], 1)
	if got, _ := tags.Get("error_type"); got != string(stream.ErrHTTP5xx) {
		t.Errorf("primary's error_type tag %q", got)
	}
	if got, _ := tags.Get("name"); got != "big" {
		t.Errorf("primary's name tag %q", got)
	}
}
