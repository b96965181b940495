package report

import (
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// wave runs closed-loop VUs through 2 → 10 → 2 VUs, 10 s each; ttftAt gives
// the server's TTFT (ms) for a call started at a time into the run.
func wave(seed uint64, ttftAt func(sec float64) float64) []*Observation {
	rng := rand.New(rand.NewPCG(seed, 5))
	var out []*Observation
	for _, st := range []struct{ from, to, vus int }{{0, 10, 2}, {10, 20, 10}, {20, 30, 2}} {
		for range st.vus {
			t := t0.Add(time.Duration(st.from)*time.Second + time.Duration(rng.Float64()*float64(300*time.Millisecond)))
			for t.Before(t0.Add(time.Duration(st.to) * time.Second)) {
				ttft := msD(ttftAt(t.Sub(t0).Seconds()) * (0.9 + 0.2*rng.Float64()))
				e2e := ttft + 400*time.Millisecond
				out = append(out, &Observation{
					Result: &stream.Result{Start: t, End: t.Add(e2e), OK: true, TTFT: measure.Of(ttft), E2E: measure.Of(e2e), OutputTokens: 20, TokensPerSec: 50},
					VUs:    st.vus,
					Active: st.vus,
				})
				t = t.Add(e2e + 20*time.Millisecond)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].End.Before(out[j].End) })
	return out
}

func collectAll(obs []*Observation) *Run {
	c := NewCollector(Options{Start: t0})
	for _, o := range obs {
		c.Add(o)
	}
	return c.Snapshot()
}

func TestWaveRecoveryTime(t *testing.T) {
	for _, tc := range []struct {
		name     string
		linger   float64 // seconds TTFT stays high after the burst
		min, max time.Duration
	}{{"drains at once", 0, 0, 3 * time.Second}, {"drains in 4 s", 4, 4 * time.Second, 7 * time.Second}} {
		t.Run(tc.name, func(t *testing.T) {
			run := collectAll(wave(1, func(s float64) float64 {
				if s >= 10 && s < 20+tc.linger {
					return 800
				}
				return 100
			}))
			ws := run.Waves()
			if len(ws) != 1 {
				t.Fatalf("%d waves, want 1: %+v", len(ws), ws)
			}
			w := ws[0]
			if !w.Recovered || w.Recovery < tc.min || w.Recovery > tc.max || w.Base != 2 || w.Peak != 10 {
				t.Fatalf("wave %+v, want recovery in [%s, %s]", w, tc.min, tc.max)
			}
			if w.BeforeTTFTP50 < 90 || w.BeforeTTFTP50 > 110 || w.PeakTTFTP50 < 700 {
				t.Errorf("TTFT before %v, at worst %v", w.BeforeTTFTP50, w.PeakTTFTP50)
			}
			text, doc, rec, err := Render(run, nil, RenderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text, "burst 10s–") || !strings.Contains(text, "after the load came down") ||
				!strings.Contains(string(doc), `id="waves"`) || !strings.Contains(string(rec), `"recovery_seconds"`) {
				t.Errorf("recovery missing from a rendering:\n%s", text)
			}
		})
	}
}

func TestWaveThatNeverRecoversSaysSo(t *testing.T) {
	run := collectAll(wave(2, func(s float64) float64 {
		if s >= 10 {
			return 800
		}
		return 100
	}))
	ws := run.Waves()
	if len(ws) != 1 || ws[0].Recovered {
		t.Fatalf("%+v", ws)
	}
	if d := ws[0].Describe(t0); !strings.Contains(d, "not back to its level (≤ ") {
		t.Errorf("%s", d)
	}
}

// Two VUs on an engine that admits requests between 17 ms steps: the TTFT
// median is 17 ms before the burst and 32 ms after it, the VUs having settled
// in another phase of the step. That is recovered; the same move with 1 ms
// steps is not.
func TestWaveRecoveryAllowsOneDecodeStep(t *testing.T) {
	for _, tc := range []struct {
		step      float64
		recovered bool
	}{{17, true}, {1, false}} {
		obs := wave(3, func(s float64) float64 {
			switch {
			case s < 10:
				return 17
			case s < 20:
				return 800
			}
			return 32
		})
		for _, o := range obs {
			o.Gaps = stream.GapsOf(slices.Repeat([]time.Duration{msD(tc.step)}, 20)...)
		}
		ws := collectAll(obs).Waves()
		if len(ws) != 1 || ws[0].Recovered != tc.recovered {
			t.Errorf("step %v ms: %+v, want recovered %v", tc.step, ws, tc.recovered)
		}
	}
}

func TestSteadyAndStepLoadsHaveNoWave(t *testing.T) {
	for _, s := range []synth{
		{seed: 1, stages: []synthStage{{12, 60}}},
		{seed: 1, cats: oneShortCat(), stages: plateaus(8, 1, 4, 8, 16)}, // rises, never comes back
	} {
		if ws := s.collect().Waves(); len(ws) != 0 {
			t.Errorf("%+v", ws)
		}
	}
}
