package report

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

func ids(fs []runrecord.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.ID)
	}
	return out
}

func steps(vus ...int) []synthStage {
	var out []synthStage
	for _, v := range vus {
		out = append(out, synthStage{VUs: v, Seconds: 60})
	}
	return out
}

func TestHealthyRunsProduceNoFinding(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    synth
	}{
		{"constant load", synth{stages: []synthStage{{20, 180}}}},
		{"step load that scales", synth{stages: steps(10, 20, 30, 40)}},
		{"noisy", synth{stages: []synthStage{{16, 120}}, noise: 0.45}},
		{"warm cache", synth{stages: []synthStage{{12, 90}}, sharedPrefix: true, hitRate: 0.8}},
		{"fast network with early headers", synth{stages: []synthStage{{12, 90}}, headersMS: 15}},
		{"a busy but keeping-up load generator", synth{stages: []synthStage{{12, 90}}, clientLagMS: 0.5}},
		{"a load generator as late as at 500 streams on 2 cores", synth{stages: []synthStage{{12, 90}}, clientLagMS: 9}},
		{"one first token in three hundred read with the next", synth{stages: []synthStage{{12, 90}}, lateFirst: 0.003}},
	} {
		for seed := uint64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprintf("%s/seed%d", tc.name, seed), func(t *testing.T) {
				t.Parallel() // each case collects and diagnoses a run of its own
				s := tc.s
				s.seed = seed
				fs := Diagnose(s.collect())
				for _, f := range fs {
					t.Errorf("unexpected finding %s: %v", f.ID, f.Evidence)
				}
			})
		}
	}
}

func TestEachCauseIsDiagnosed(t *testing.T) {
	longOut := defaultCats()
	longOut[2].OutMin, longOut[2].OutMax = 300, 300
	varied := defaultCats()
	for i := range varied {
		varied[i].OutMin, varied[i].OutMax = 20, 600
	}
	for _, tc := range []struct {
		want    string
		s       synth
		mustNot []string
	}{
		{"queue_bound", synth{stages: steps(10, 20, 40), queueMS: func(c int) float64 { return 40 * float64(c-10) }},
			[]string{"decode_saturated", "drift"}},
		{"decode_saturated", synth{stages: steps(10, 20, 40), tpsAt: func(c int) float64 { return 50 / (1 + 0.04*float64(c-10)) }},
			[]string{"queue_bound", "drift"}},
		{"knee", synth{stages: steps(10, 20, 30, 40, 50), queueMS: func(c int) float64 { return 250 * math.Max(0, float64(c-30)) }},
			[]string{"decode_saturated"}},
		{"network_heavy", synth{stages: []synthStage{{12, 90}}, connectMS: 400}, nil},
		{"network_heavy", synth{stages: []synthStage{{12, 90}}, headersMS: 400}, nil},
		{"gateway_buffering", synth{stages: []synthStage{{12, 90}}, gateway: true}, []string{"stalls"}},
		{"client_bound", synth{stages: []synthStage{{12, 90}}, parseShare: 0.2}, nil},
		{"client_bound", synth{stages: []synthStage{{12, 90}}, eventLagMS: 150}, nil},
		{"client_bound", synth{stages: []synthStage{{12, 90}}, starvedProb: 0.05}, nil},
		{"client_bound", synth{stages: []synthStage{{12, 90}}, clientLagMS: 15}, nil},
		{"client_bound", synth{stages: []synthStage{{12, 90}}, clientLagMS: 11}, nil},
		{"client_bound", synth{stages: []synthStage{{12, 90}}, lateFirst: 0.03}, nil},
		{"cache_busted", synth{stages: []synthStage{{12, 90}}, sharedPrefix: true}, nil},
		{"head_of_line", synth{stages: []synthStage{{8, 240}}, cats: longOut, holMS: 800}, []string{"drift"}},
		{"stalls", synth{stages: []synthStage{{12, 90}}, stallProb: 0.1}, []string{"gateway_buffering"}},
		{"length_variance", synth{stages: []synthStage{{24, 120}}, cats: varied}, []string{"drift"}},
		{"drift", synth{stages: []synthStage{{16, 180}}, driftPerMin: 0.6}, nil},
		{"drift", synth{stages: []synthStage{{16, 180}}, driftPerMin: -0.25}, nil},
	} {
		for seed := uint64(1); seed <= 2; seed++ {
			t.Run(fmt.Sprintf("%s/seed%d", tc.want, seed), func(t *testing.T) {
				t.Parallel() // each case collects and diagnoses a run of its own
				s := tc.s
				s.seed = seed
				fs := Diagnose(s.collect())
				got := ids(fs)
				if !slices.Contains(got, tc.want) {
					t.Fatalf("want %s, got %v", tc.want, got)
				}
				for _, no := range tc.mustNot {
					if slices.Contains(got, no) {
						t.Errorf("%s must not come with %s", tc.want, no)
					}
				}
				for _, f := range fs {
					if f.ID == tc.want && (len(f.Evidence) == 0 || f.Advice == "") {
						t.Errorf("%s without evidence or advice", f.ID)
					}
				}
			})
		}
	}
}

func TestDiagnoseEmptyRun(t *testing.T) {
	if fs := Diagnose(NewCollector(Options{}).Snapshot()); len(fs) != 0 {
		t.Fatalf("empty run: %v", ids(fs))
	}
	if Diagnose(nil) != nil {
		t.Fatal("nil run must give no finding")
	}
}

func TestKneeIsTheLastStageBeforeLatencyOutrunsThroughput(t *testing.T) {
	// Latency is flat up to 30 VUs and climbs steeply after: the knee is 30, the advice 24.
	s := synth{seed: 5, stages: steps(10, 20, 30, 40, 50), queueMS: func(c int) float64 { return 250 * math.Max(0, float64(c-30)) }}
	for _, f := range Diagnose(s.collect()) {
		if f.ID == "knee" {
			if f.Values["knee"] != 30 || f.Values["recommended"] != 24 {
				t.Fatalf("knee %v, recommended %v; want 30 and 24", f.Values["knee"], f.Values["recommended"])
			}
			return
		}
	}
	t.Fatal("no knee found")
}
