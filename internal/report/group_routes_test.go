package report

import (
	"strings"
	"testing"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// A primary that fails every call, each answered by its fallback: one client,
// one route. The report must still say who served the calls, or it reads as
// the primary answering in a millisecond.
func TestEveryCallServedByTheFallbackIsShown(t *testing.T) {
	var obs []*Observation
	for i := range 40 {
		at := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		obs = append(obs, &Observation{
			Result: &stream.Result{
				Start: at, End: at.Add(2 * time.Millisecond), OK: true, TTFT: measure.Of(time.Millisecond),
				E2E: measure.Of(2 * time.Millisecond), OutputTokens: 10,
			},
			Origin: record.Origin{Name: "small", Model: "small-model", Route: "fallback", Category: "chat"},
			VUs:    1,
			Active: 1,
		})
	}
	run := collectAll(obs)
	text := RenderText(run, nil, nil)
	if !strings.Contains(text, "small · fallback · small-model") {
		t.Fatalf("no route table for calls all served by the fallback:\n%s", text)
	}
	if recs := routeRecords(run); len(recs) != 1 || recs[0].Route != "fallback" || recs[0].Requests != 40 {
		t.Fatalf("record routes %+v", recs)
	}
	// One client on its primary route alone needs no route table.
	for _, o := range obs {
		o.Route = ""
	}
	if text := RenderText(collectAll(obs), nil, nil); strings.Contains(text, "client · route · model") {
		t.Fatalf("a route table for one client on one route:\n%s", text)
	}
}
