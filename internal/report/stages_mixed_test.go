package report

import (
	"strings"
	"testing"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// A warm-up scenario of a few VUs, then an arrival-rate step load: the warm-up
// is a level of VUs, the steps levels of requests/s. One curve cannot hold both
// units; the report compared "39 ms at 3 VUs → 334 ms at 20 req/s". The curve
// keeps the kind with more stages (the step load) and never mixes them.
func TestStagesNeverMixVUsAndRates(t *testing.T) {
	warm := make([]*Observation, 0, 100)
	for i := range 100 {
		at := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		warm = append(warm, &Observation{
			Result: &stream.Result{
				Start: at, End: at.Add(300 * time.Millisecond), OK: true, TTFT: measure.Of(20 * time.Millisecond),
				E2E: measure.Of(300 * time.Millisecond), OutputTokens: 25, TokensPerSec: 90,
			},
			VUs:    3,
			Active: 3,
		})
	}
	steps := openLoad(1, 10, 4, 500, 2, 4, 7, 12)
	for _, o := range steps {
		o.Start, o.End = o.Start.Add(10*time.Second), o.End.Add(10*time.Second)
	}
	run := collectAll(append(warm, steps...))
	stages := run.Stages()
	if len(stages) < 3 {
		t.Fatalf("%d stages", len(stages))
	}
	for _, st := range stages {
		if !st.ByRate {
			t.Fatalf("a VU level (%v VUs) in a curve of rates", st.Concurrency)
		}
	}
	fs := Diagnose(run)
	text := RenderText(run, fs, nil)
	if strings.Contains(text, "VUs →") || strings.Contains(text, "VUs to") {
		t.Fatalf("a finding compares VUs with rates:\n%s", text)
	}
}
