package report

import (
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// openLoad is an arrival-rate test: Poisson arrivals at each rate for secs
// seconds, served by `slots` servers of serviceMS each; the VU pool is a
// constant 50, as k6's arrival-rate executors keep it.
func openLoad(seed uint64, secs int, slots int, serviceMS float64, rates ...float64) []*Observation {
	rng := rand.New(rand.NewPCG(seed, 3))
	free := make([]time.Time, slots)
	for i := range free {
		free[i] = t0
	}
	var out []*Observation
	at := t0
	for _, rate := range rates {
		end := at.Add(time.Duration(secs) * time.Second)
		for t := at; ; {
			t = t.Add(time.Duration(rng.ExpFloat64() / rate * float64(time.Second)))
			if !t.Before(end) {
				break
			}
			sort.Slice(free, func(i, j int) bool { return free[i].Before(free[j]) })
			begin := t
			if free[0].After(t) {
				begin = free[0]
			}
			service := msD(serviceMS * (0.9 + 0.2*rng.Float64()))
			free[0] = begin.Add(service)
			ttft := begin.Sub(t) + msD(20)
			e2e := free[0].Sub(t)
			out = append(out, &Observation{
				Result: &stream.Result{
					Start: t, End: t.Add(e2e), OK: true, TTFT: measure.Of(ttft), E2E: measure.Of(e2e), OutputTokens: 25,
					TPOT: measure.Of((service - msD(20)) / 25), TokensPerSec: 25 / (service - msD(20)).Seconds(),
				},
				VUs:    50,
				Active: 4,
				Origin: record.Origin{Rate: rate},
			})
		}
		at = end
	}
	sort.Slice(out, func(i, j int) bool { return out[i].End.Before(out[j].End) })
	return out
}

func TestArrivalRateStepsAreStagesByRate(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		obs := openLoad(seed, 10, 4, 500, 2, 4, 7, 12)
		run := collectAll(obs)
		stages := run.Stages()
		if len(stages) < 3 || !stages[0].ByRate {
			t.Fatalf("seed %d: %d stages (by rate: %v)", seed, len(stages), len(stages) > 0 && stages[0].ByRate)
		}
		fs := Diagnose(run)
		if !slices.Contains(ids(fs), "queue_bound") {
			t.Fatalf("seed %d: %v", seed, ids(fs))
		}
		text := RenderText(run, fs, nil)
		if !strings.Contains(text, "stage (req/s)") || !strings.Contains(text, "req/s →") {
			t.Errorf("seed %d: the text does not speak of rates:\n%s", seed, text)
		}
		// The same calls without the rate: one VU level, no stages to compare.
		for _, o := range obs {
			o.Rate = 0
		}
		if n := len(collectAll(obs).Stages()); n > 1 {
			t.Errorf("seed %d: %d stages from a constant VU pool", seed, n)
		}
	}
}

// An overloaded level's calls queue for longer than its plateau lasts; it is
// still a stage, since the plateau outlasted a call of the quickest level.
func TestOverloadedLevelIsStillAStage(t *testing.T) {
	obs := openLoad(4, 8, 2, 1000, 1.5, 3, 6) // capacity 2/s: 3/s and 6/s overload it
	run := collectAll(obs)
	var slowest time.Duration
	for _, l := range run.levels {
		slowest = max(slowest, l.meanCall())
	}
	if slowest < 8*time.Second {
		t.Fatalf("the top level's mean call is %s: not the overload this test is about", slowest)
	}
	if n := len(run.Stages()); n != 3 {
		t.Fatalf("%d stages, want 3 (%s)", n, run.StageNote())
	}
}
