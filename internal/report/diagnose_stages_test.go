package report

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// shortSteps is a step load the way examples/step-load.js runs it: 12 s per
// stage, so the low stages have only 10–30 calls.
func shortSteps(vus ...int) []synthStage {
	var out []synthStage
	for _, v := range vus {
		out = append(out, synthStage{VUs: v, Seconds: 12})
	}
	return out
}

// slotQueue is the waiting time in front of a server with a fixed number of
// slots: nothing below it, then one more service time per full batch of VUs.
func slotQueue(slots int, serviceMS float64) func(int) float64 {
	return func(vus int) float64 {
		return serviceMS * math.Max(0, float64(vus-slots)/float64(slots))
	}
}

func oneShortCat() []synthCat {
	return []synthCat{{Name: "short", Weight: 1, PromptTokens: 40, OutMin: 48, OutMax: 48, TTFTMS: 20}}
}

func TestShortStagesStaySilentWhenTheServiceScales(t *testing.T) {
	t.Parallel()
	for _, noise := range []float64{0.2, 0.45, 0.8} {
		for seed := uint64(1); seed <= 8; seed++ {
			t.Run(fmt.Sprintf("noise%.2f/seed%d", noise, seed), func(t *testing.T) {
				s := synth{seed: seed, noise: noise, cats: oneShortCat(), stages: shortSteps(1, 2, 4, 8, 12)}
				for _, f := range Diagnose(s.collect()) {
					t.Errorf("unexpected finding %s: %v", f.ID, f.Evidence)
				}
			})
		}
	}
}

func TestShortStagesNameTheKneeAndTheQueue(t *testing.T) {
	// Four slots, ~1 s per call: what llm-sim's small profile does in the step-load example.
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			s := synth{seed: seed, cats: oneShortCat(), stages: shortSteps(1, 2, 4, 8, 12), queueMS: slotQueue(4, 1000)}
			fs := Diagnose(s.collect())
			got := ids(fs)
			for _, want := range []string{"queue_bound", "knee"} {
				if !slices.Contains(got, want) {
					t.Fatalf("want %s, got %v", want, got)
				}
			}
			if slices.Contains(got, "decode_saturated") {
				t.Errorf("decode holds, yet decode_saturated: %v", got)
			}
			for _, f := range fs {
				if f.ID == "knee" && f.Values["knee"] != 4 {
					t.Errorf("knee at %v, want 4: %v", f.Values["knee"], f.Evidence)
				}
			}
		})
	}
}

func TestDecodeSlowdownThenQueueAreBothNamed(t *testing.T) {
	// Decode slows while the 4 slots fill, then requests queue: two causes at
	// two ranges of load, and the report must not trade one for the other.
	s := synth{
		seed: 3, cats: oneShortCat(), stages: shortSteps(1, 2, 4, 8, 12), queueMS: slotQueue(4, 1000),
		tpsAt: func(vus int) float64 { return 60 / (1 + 0.2*float64(min(vus, 4)-1)) },
	}
	got := ids(Diagnose(s.collect()))
	for _, want := range []string{"decode_saturated", "queue_bound"} {
		if !slices.Contains(got, want) {
			t.Fatalf("want %s, got %v", want, got)
		}
	}
}

func TestMedianIntervalCoversTheMedian(t *testing.T) {
	// A 99 % interval must miss the true median of a skewed distribution in
	// about 1 % of samples, whatever their size: that is what keeps the stage
	// rules quiet on noise.
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{10, 30, 200} {
		misses := 0
		const trials = 2000
		for range trials {
			s := sketch.New(sketch.FineAlpha)
			for range n {
				s.Add(100 * math.Exp(rng.NormFloat64()*0.5)) // log-normal, median 100
			}
			lo, hi := medianInterval(s)
			if lo > 100*(1+sketch.FineAlpha) || hi < 100*(1-sketch.FineAlpha) {
				misses++
			}
		}
		if rate := float64(misses) / trials; rate > 0.02 {
			t.Errorf("n=%d: the interval missed the median in %.1f%% of samples", n, 100*rate)
		}
	}
}

func TestClearlyAboveNeedsMoreEffectWithFewerCalls(t *testing.T) {
	sample := func(seed uint64, n int, median float64) *sketch.Sketch {
		rng := rand.New(rand.NewPCG(seed, 7))
		s := sketch.New(sketch.FineAlpha)
		for range n {
			s.Add(median * math.Exp(rng.NormFloat64()*0.3))
		}
		return s
	}
	if clearlyAbove(sample(1, 9, 1000), sample(2, 9, 10)) {
		t.Error("fewer than stageMinCalls calls must never be enough")
	}
	if !clearlyAbove(sample(1, 10, 1000), sample(2, 10, 10)) {
		t.Error("×100 with 10 calls each must be clear")
	}
	if clearlyAbove(sample(1, 10, 130), sample(2, 10, 100)) {
		t.Error("×1.3 with 10 calls each must not be clear")
	}
	if !clearlyAbove(sample(1, 300, 130), sample(2, 300, 100)) {
		t.Error("×1.3 with 300 calls each must be clear")
	}
}

func TestStageThroughputIsWhatTheServiceDeliveredAtThatLoad(t *testing.T) {
	// 1, 2, 4 VUs, each call 1 s and 50 tokens, back to back; then the test
	// winds down and one last call finishes at 4 VUs after a long pause, as
	// k6's ramp-down makes happen. The 4-VU stage must still read ~200 tokens/s,
	// not 200 spread over the pause.
	c := NewCollector(Options{Start: t0})
	at := t0
	for _, vus := range []int{1, 2, 4} {
		for v := range vus {
			for k := range 12 {
				start := at.Add(time.Duration(k)*time.Second + time.Duration(v)*10*time.Millisecond)
				c.Add(&Observation{
					Result: &stream.Result{
						Start: start, End: start.Add(time.Second), OK: true, TTFT: measure.Of(50 * time.Millisecond), E2E: measure.Of(time.Second),
						TPOT: measure.Of(19 * time.Millisecond), TokensPerSec: 50, OutputTokens: 50, TTFB: measure.Of(time.Millisecond),
						TTFTAnswer: measure.Of(50 * time.Millisecond),
					},
					VUs:    vus,
					Active: vus,
				})
			}
		}
		at = at.Add(12 * time.Second)
	}
	stray := at.Add(25 * time.Second)
	c.Add(&Observation{
		Result: &stream.Result{
			Start: stray, End: stray.Add(time.Second), OK: true, OutputTokens: 50, TTFT: measure.Of(50 * time.Millisecond),
			E2E: measure.Of(time.Second), TPOT: measure.Of(19 * time.Millisecond), TokensPerSec: 50,
		},
		VUs:    4,
		Active: 1,
	})
	stages := c.Snapshot().Stages()
	if len(stages) != 3 {
		t.Fatalf("%d stages, want 3", len(stages))
	}
	for _, st := range stages {
		want := 50 * st.Concurrency
		if math.Abs(st.OutputTokensPerSec-want) > 0.15*want {
			t.Errorf("%v VUs: %.1f output tokens/s, want ~%.0f", st.Concurrency, st.OutputTokensPerSec, want)
		}
		if math.Abs(st.RequestsPerSec-st.Concurrency) > 0.15*st.Concurrency {
			t.Errorf("%v VUs: %.2f requests/s, want ~%v", st.Concurrency, st.RequestsPerSec, st.Concurrency)
		}
	}
}
