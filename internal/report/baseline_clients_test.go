package report

import (
	"strings"
	"testing"

	"github.com/llmstream/xk6-llmstream/internal/report/compare"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// twoClients is a run of clients a and b, each a synthetic service of its own.
func twoClients(a, b synth) *Run {
	c := NewCollector(Options{})
	for name, s := range map[string]synth{"a": a, "b": b} {
		for _, o := range s.observations() {
			o.Name = name
			c.Add(o)
		}
	}
	return c.Snapshot()
}

// Two providers in one run are each compared with themselves: b's regression
// is found although a, unchanged and faster, would dilute it in a merged
// comparison; live regression checks read each client's own P95.
func TestCompareSeveralClientsEachWithItself(t *testing.T) {
	t.Parallel()
	fast := synth{seed: 1, stages: []synthStage{{16, 120}}}
	slow := synth{seed: 2, stages: []synthStage{{16, 120}}, queueMS: func(int) float64 { return 400 }}
	r := twoClients(fast, slow)
	b, err := MarshalRecord(r, Diagnose(r), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	base, err := runrecord.LoadBaseline(b)
	if err != nil {
		t.Fatal(err)
	}
	if base.Clients["a"] == nil || len(base.Clients["a"].Categories["short"].Samples["ttft"]) == 0 {
		t.Fatal("a client's record keeps no samples to compare against")
	}

	// This run: a unchanged, b slower again by 300 ms.
	slower := slow
	slower.seed = 4
	slower.queueMS = func(int) float64 { return 700 }
	again := fast
	again.seed = 3
	c := compare.Records(NewRecord(twoClients(again, slower), nil, nil, nil), base)
	seen := map[string]bool{}
	for _, row := range c.Rows {
		seen[row.Client] = true
		if row.Metric != "ttft" || row.Stat != "p50" {
			continue
		}
		want := runrecord.VerdictSame
		if row.Client == "b" {
			want = runrecord.VerdictWorse
		}
		if row.Verdict != want {
			t.Errorf("client %s, %s TTFT p50: %s, want %s", row.Client, row.Category, row.Verdict, want)
		}
	}
	if !seen["a"] || !seen["b"] || seen[""] {
		t.Fatalf("rows by client: %v", seen)
	}
	if text := RenderText(twoClients(again, slower), nil, c); !strings.Contains(text, "b · short") {
		t.Fatalf("the text comparison does not name the client:\n%s", text)
	}

	pa, okA := base.ClientP95("a", "short", "ttft")
	pb, okB := base.ClientP95("b", "short", "ttft")
	if !okA || !okB || pb <= pa {
		t.Fatalf("per-client P95: a %v (%v), b %v (%v)", pa, okA, pb, okB)
	}
	if pAll, _ := base.P95("short", "ttft"); pAll == pa || pAll == pb {
		t.Fatalf("the run's P95 %v equals a client's", pAll)
	}
}
