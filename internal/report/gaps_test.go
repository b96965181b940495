package report

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

func msD(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

func TestGapStatisticsAreExact(t *testing.T) {
	c := NewCollector(Options{Start: t0})
	c.Add(&Observation{
		Result: &stream.Result{
			Start: t0, End: t0.Add(time.Second), OK: true, TTFT: measure.Of(msD(50)), E2E: measure.Of(time.Second),
			Gaps: stream.GapsOf(msD(0.1), msD(0.2), msD(30), msD(0.1), msD(31.5)),
		},
	})
	c.Add(&Observation{
		Result: &stream.Result{Start: t0, End: t0.Add(time.Second), OK: true, TTFT: measure.Of(msD(50)), E2E: measure.Of(time.Second), TPOT: measure.Of(msD(400))},
	}) // a per-token mean without the gaps behind it is not a gap
	g := c.Snapshot().Category(runrecord.AllCategories)
	if g.GapCount != 5 || g.BurstGaps != 3 || g.Bursts != 2 || g.LongestGapMS != 31.5 {
		t.Fatalf("gaps %d, burst gaps %d, bursts %d, longest %v", g.GapCount, g.BurstGaps, g.Bursts, g.LongestGapMS)
	}
	if n := g.S(record.DistGap).Count(); n != 5 {
		t.Fatalf("gap sketch holds %d values, want the 5 real gaps", n)
	}
}

// The report reads gaps only from Observation.Gaps, which the module fills for
// every call whatever gapSamples says: the gateway pattern is found from them.
func TestGatewayBufferingNeedsOnlyTheCallsGaps(t *testing.T) {
	run := synth{seed: 3, stages: []synthStage{{12, 90}}, gateway: true}.collect()
	fs := Diagnose(run)
	f := findingByID(fs, "gateway_buffering")
	if f == nil {
		t.Fatalf("gateway_buffering not found: %v", ids(fs))
	}
	if !strings.Contains(f.Evidence[0], "events per burst") || f.Values["events_per_burst"] < 5 {
		t.Errorf("burst evidence: %v %v", f.Evidence, f.Values)
	}
}

func TestStallEvidenceQuotesTheLongestRealGap(t *testing.T) {
	run := synth{seed: 1, stages: []synthStage{{12, 90}}, stallProb: 0.1}.collect()
	f := findingByID(Diagnose(run), "stalls")
	if f == nil {
		t.Fatal("stalls not found")
	}
	// The synthetic stall is a 900 ms gap; every other gap is about 20 ms.
	if v := f.Values["longest_gap_ms"]; v < 899 || v > 901 {
		t.Fatalf("longest gap %v ms, want the 900 ms stall", v)
	}
	if !strings.Contains(strings.Join(f.Evidence, "\n"), "longest gap 900ms") {
		t.Errorf("evidence: %v", f.Evidence)
	}
}

func TestEveryAdviceLinksItsGuideSection(t *testing.T) {
	var fs []runrecord.Finding
	for _, s := range []synth{
		{seed: 1, stages: []synthStage{{12, 90}}, stallProb: 0.1},
		{seed: 1, stages: []synthStage{{12, 90}}, gateway: true, connectMS: 80, parseShare: 0.2},
		{seed: 1, stages: steps(8, 16, 24, 32), queueMS: func(c int) float64 { return 30 * float64(max(0, c-16)) }},
	} {
		fs = append(fs, Diagnose(s.collect())...)
	}
	if len(fs) < 5 {
		t.Fatalf("only %v", ids(fs))
	}
	for _, f := range fs {
		if !strings.HasSuffix(f.Advice, "docs/guide.md#"+f.ID) || strings.Contains(f.Advice, "§") {
			t.Errorf("%s advice: %q", f.ID, f.Advice)
		}
	}
}

func findingByID(fs []runrecord.Finding, id string) *runrecord.Finding {
	for i := range fs {
		if fs[i].ID == id {
			return &fs[i]
		}
	}
	return nil
}

// A call's gaps reach the group's gap distribution and the timeline's as a
// sketch of them merged would, whether the call has a few (kept as values)
// or many (sketched before the lock): the same buckets, count, sum and
// extremes, to the last bit, over calls of both kinds and of two clients.
func TestFewAndManyGapsMergeAsTheirSketches(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	c := NewCollector(Options{Start: t0})
	fine := map[string]*sketch.Sketch{"a": sketch.New(sketch.FineAlpha), "b": sketch.New(sketch.FineAlpha)}
	coarseAll := sketch.New(sketch.CoarseAlpha)
	for i := range 400 {
		n := 1 + rng.IntN(fewGaps+1) // at most fewGaps, and one more
		if i%7 == 0 {
			n = fewGaps + 1 + rng.IntN(300)
		}
		gaps := make([]time.Duration, n)
		of, ofCoarse := sketch.New(sketch.FineAlpha), sketch.New(sketch.CoarseAlpha)
		for j := range gaps {
			gaps[j] = time.Duration(rng.ExpFloat64() * float64(20*time.Millisecond))
			if rng.IntN(10) == 0 {
				gaps[j] = 0
			}
			gaps[j] = gaps[j].Truncate(time.Microsecond) // as stream.Gaps keeps them
			of.Add(measure.MS(gaps[j]))
			ofCoarse.Add(measure.MS(gaps[j]))
		}
		client := []string{"a", "b"}[i%2]
		c.Add(&Observation{
			Result: &stream.Result{Start: t0, End: t0.Add(time.Second), OK: true, TTFT: measure.Of(msD(50)),
				E2E: measure.Of(time.Second), Gaps: stream.GapsOf(gaps...)},
			Origin: record.Origin{Name: client},
		})
		if err := fine[client].Merge(of); err != nil {
			t.Fatal(err)
		}
		if err := coarseAll.Merge(ofCoarse); err != nil {
			t.Fatal(err)
		}
	}
	run := c.Snapshot()
	same := func(what string, got, want *sketch.Sketch) {
		t.Helper()
		g, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		w, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		if string(g) != string(w) {
			t.Errorf("%s: got %s, want %s", what, g, w)
		}
	}
	for k, g := range run.groups {
		same("group "+k.Client, g.S(record.DistGap), fine[k.Client])
	}
	same("timeline", run.Timeline.Buckets[0].Gap, coarseAll) // the second every call started in
}
