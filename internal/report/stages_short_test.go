package report

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func plateaus(seconds int, vus ...int) []synthStage {
	var out []synthStage
	for _, v := range vus {
		out = append(out, synthStage{VUs: v, Seconds: seconds})
	}
	return out
}

// The step load users write: 1→4→8→16 VUs, 8 s (or even 5 s) per step, calls
// of about a second, four server slots. The stages must be found and the
// queue in front of the slots named.
func TestEightSecondStepsAreStages(t *testing.T) {
	for _, secs := range []int{8, 6} {
		for seed := uint64(1); seed <= 4; seed++ {
			t.Run(fmt.Sprintf("%ds/seed%d", secs, seed), func(t *testing.T) {
				s := synth{seed: seed, cats: oneShortCat(), stages: plateaus(secs, 1, 4, 8, 16), queueMS: slotQueue(4, 1000)}
				run := s.collect()
				if n := len(run.Stages()); n < 3 {
					t.Fatalf("%d stages found, want at least 4, 8 and 16 VUs", n)
				}
				got := ids(Diagnose(run))
				for _, want := range []string{"queue_bound", "knee"} {
					if !slices.Contains(got, want) {
						t.Fatalf("want %s, got %v", want, got)
					}
				}
				if slices.Contains(got, "decode_saturated") {
					t.Errorf("decode holds, yet decode_saturated: %v", got)
				}
			})
		}
	}
}

func TestShortStepsStaySilentWhenTheServiceScales(t *testing.T) {
	for _, secs := range []int{8, 5} {
		for seed := uint64(1); seed <= 6; seed++ {
			t.Run(fmt.Sprintf("%ds/seed%d", secs, seed), func(t *testing.T) {
				s := synth{seed: seed, noise: 0.45, cats: oneShortCat(), stages: plateaus(secs, 1, 4, 8, 16)}
				for _, f := range Diagnose(s.collect()) {
					t.Errorf("unexpected finding %s: %v", f.ID, f.Evidence)
				}
			})
		}
	}
}

// Steps shorter than a few calls are not stages; the report says why and
// what to change, and minStage lets the user accept them.
func TestTooShortStepsAreExplainedAndMinStageAcceptsThem(t *testing.T) {
	s := synth{seed: 1, cats: oneShortCat(), stages: plateaus(3, 4, 8, 16, 32)} // 3 s steps, ~1 s calls
	run := s.collect()
	if n := len(run.Stages()); n != 0 {
		t.Fatalf("%d stages from 3 s steps of 1 s calls", n)
	}
	note := run.StageNote()
	for _, want := range []string{"4 levels (4, 8, 16, 32 VUs)", "none held long enough", "minStage"} {
		if !strings.Contains(note, want) {
			t.Errorf("note lacks %q: %s", want, note)
		}
	}
	text, _, rec, err := Render(run, nil, RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "no load stages to compare") || !strings.Contains(string(rec), "no load stages to compare") {
		t.Errorf("the note is not in the text and the record:\n%s", text)
	}

	c := NewCollector(Options{Start: t0, MinStage: 1500 * time.Millisecond})
	for _, o := range s.observations() {
		c.Add(o)
	}
	run = c.Snapshot()
	if n := len(run.Stages()); n != 4 || run.StageNote() != "" {
		t.Fatalf("minStage 1.5s: %d stages, note %q", n, run.StageNote())
	}
	// One level only: nothing to explain.
	if note := (synth{seed: 1, cats: oneShortCat(), stages: plateaus(4, 8)}).collect().StageNote(); note != "" {
		t.Errorf("constant load got a note: %s", note)
	}
}

// report() may still choose the stage length: stages are found when read.
func TestMinStageCanBeSetOnAFrozenRun(t *testing.T) {
	run := (synth{seed: 1, cats: oneShortCat(), stages: plateaus(3, 4, 8, 16, 32)}).collect()
	if n := len(run.Stages()); n != 0 {
		t.Fatalf("%d stages before", n)
	}
	run.SetMinStage(1500 * time.Millisecond)
	if n := len(run.Stages()); n != 4 || run.StageNote() != "" {
		t.Fatalf("%d stages after minStage 1.5s, note %q", n, run.StageNote())
	}
}
