package report

import (
	"slices"
	"testing"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// A server that answers in a millisecond (a local fake, a cache, llm-sim's
// zero-delay profile) spends most of that millisecond before its headers: a
// share, not a cost. Moving the load generator closer gains nothing, so
// network_heavy stays silent.
func TestNetworkHeavyNeedsTimeWorthSaving(t *testing.T) {
	var obs []*Observation
	for i := range 200 {
		at := t0.Add(time.Duration(i) * 50 * time.Millisecond)
		obs = append(obs, &Observation{
			Result: &stream.Result{
				Start: at, End: at.Add(time.Millisecond), OK: true, TTFB: measure.Of(600 * time.Microsecond),
				TTFT: measure.Of(800 * time.Microsecond), E2E: measure.Of(time.Millisecond), OutputTokens: 10, TokensPerSec: 20000,
			},
			Origin: record.Origin{Category: "chat"},
			VUs:    1,
			Active: 1,
		})
	}
	if got := ids(Diagnose(collectAll(obs))); slices.Contains(got, "network_heavy") {
		t.Fatalf("network_heavy on a sub-millisecond TTFT: %v", got)
	}
	// The same shares at a real distance are the finding.
	for _, o := range obs {
		o.TTFB, o.TTFT, o.E2E = measure.Of(300*time.Millisecond), measure.Of(400*time.Millisecond), measure.Of(500*time.Millisecond)
		o.End = o.Start.Add(500 * time.Millisecond)
	}
	if got := ids(Diagnose(collectAll(obs))); !slices.Contains(got, "network_heavy") {
		t.Fatalf("no network_heavy with 300 ms before the headers: %v", got)
	}
}
