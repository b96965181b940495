package report

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
)

// capacityPart is one instance's section: windows at levels, each window's
// TTFTs (ms) given, every call ok.
func capacityPart(segment string, levels []float64, verdicts []string, ttfts [][]float64) *runrecord.Capacity {
	c := &runrecord.Capacity{Model: "rate", Unit: "req/s", Min: 4, Max: 64, WindowS: 3, WarmupS: 0.6, Precision: 0.05, Share: 0.8,
		Objectives: []runrecord.CapacityObjective{{Text: "ttft p95<250ms", Figure: "ttft", Quantile: 0.95, Limit: 250},
			{Text: "errors <1%", Figure: "errors", Limit: 0.01}},
		Segment: segment}
	last := math.NaN()
	for i, lv := range levels {
		sk := sketch.New(sketch.FineAlpha)
		for _, v := range ttfts[i] {
			sk.Add(v)
		}
		p95 := sk.Quantile(0.95)
		tp := float64(len(ttfts[i])) / 2
		c.Windows = append(c.Windows, runrecord.CapacityWindow{Index: i + 1, Level: lv, StartS: float64(3 * i), EndS: float64(3*i + 3),
			Verdict: verdicts[i], Reason: verdicts[i] + " at " + segment, Settled: true, Calls: len(ttfts[i]),
			Margin: p95/250 - 1, Margins: []runrecord.CapacityMargin{{Objective: "ttft p95<250ms", Observed: &p95, Margin: p95/250 - 1},
				{Objective: "errors <1%", Margin: -1}},
			TTFT: sketchPercentiles(sk), Throughput: &tp, Goodput: &tp, Sketches: map[string]*sketch.Sketch{"ttft": sk}})
		if verdicts[i] == "pass" && !(lv < last) {
			last = lv
		}
	}
	c.Outcome, c.Capacity = "found", &last
	return c
}

func TestMergedCapacityReadsPercentilesFromTheMergedSketches(t *testing.T) {
	levels, verdicts := []float64{4, 8, 16}, []string{"pass", "pass", "fail"}
	a := [][]float64{{10, 20, 30, 40}, {50, 60, 70, 80}, {100, 200, 300, 400}}
	b := [][]float64{{15, 25, 35, 900}, {55, 65, 75, 85}, {150, 250, 350, 450}}
	got, err := MergeCapacity([]string{"a.json", "b.json"},
		[]*runrecord.Capacity{capacityPart("0:1/2", levels, verdicts, a), capacityPart("1/2:1", levels, verdicts, b)})
	require.NoError(t, err)
	require.Empty(t, got.Disagreement)
	require.Empty(t, got.Segment)
	require.Len(t, got.Instances, 2)
	require.Equal(t, []float64{4, 8, 16}, got.Instances[1].Levels)
	require.Equal(t, "1/2:1", got.Instances[1].Segment)
	require.Equal(t, 8.0, *got.Capacity)
	require.Len(t, got.Windows, 3)
	for i, w := range got.Windows {
		whole := sketch.New(sketch.FineAlpha)
		for _, v := range append(append([]float64(nil), a[i]...), b[i]...) {
			whole.Add(v)
		}
		require.Equal(t, 8, w.Calls)
		require.Equal(t, whole.Quantile(0.95), *w.TTFT.P95, "window %d", i+1)
		require.Equal(t, whole.Quantile(0.5), *w.TTFT.P50)
		require.InDelta(t, whole.Quantile(0.95)/250-1, w.Margins[0].Margin, 1e-12)
		require.InDelta(t, 4.0, *w.Throughput, 1e-12, "the instances' rates add up")
		require.Equal(t, verdicts[i], w.Verdict)
	}
	// Not the mean of the instances' p95s: window 1's slow call sets the whole test's.
	mean := (*capacityPart("x", levels, verdicts, a).Windows[0].TTFT.P95 + *capacityPart("x", levels, verdicts, b).Windows[0].TTFT.P95) / 2
	require.Greater(t, *got.Windows[0].TTFT.P95, mean)
	require.Contains(t, got.Windows[2].Reason, "0:1/2: fail at 0:1/2")
	text := CapacityText(got)
	require.Contains(t, text, "instance 1/2:1: found, capacity 8.00 req/s, levels 4.00, 8.00, 16.0")
	require.NotContains(t, text, "disagreed")
}

func TestMergedCapacitySaysWhereTheStaircasesParted(t *testing.T) {
	calls := [][]float64{{10, 20}, {10, 20}, {10, 20}, {10, 20}}
	a := capacityPart("0:1/2", []float64{4, 8, 16, 11.3}, []string{"pass", "pass", "fail", "pass"}, calls)
	b := capacityPart("1/2:1", []float64{4, 8, 16, 22.6}, []string{"pass", "pass", "pass", "fail"}, calls)
	got, err := MergeCapacity([]string{"a.json", "b.json"}, []*runrecord.Capacity{a, b})
	require.NoError(t, err)
	require.Contains(t, got.Disagreement, "window 3 (level 16.0)")
	require.Contains(t, got.Disagreement, "1/2:1 passed it, 0:1/2 failed it")
	require.Len(t, got.Windows, 3, "past the parting no window of the whole test exists")
	require.Equal(t, "fail", got.Windows[2].Verdict)
	require.Equal(t, 11.3, *got.Capacity, "the lower answer")
	require.Equal(t, []float64{4, 8, 16, 22.6}, got.Instances[1].Levels)
	require.Contains(t, CapacityText(got), "instances disagreed: the staircases parted at window 3")

	// Levels that differ without a split verdict (one lengthened its window, say).
	c := capacityPart("1/2:1", []float64{4, 8, 12}, []string{"pass", "pass", "pass"}, calls)
	got, err = MergeCapacity([]string{"a.json", "c.json"}, []*runrecord.Capacity{a, c})
	require.NoError(t, err)
	require.Contains(t, got.Disagreement, "window 3: 0:1/2 ran 16.0, 1/2:1 ran 12.0")
	require.Len(t, got.Windows, 2)
}

func TestMergeCapacityRefusesOtherSearches(t *testing.T) {
	calls := [][]float64{{10, 20}}
	a := capacityPart("0:1/2", []float64{4}, []string{"pass"}, calls)
	b := capacityPart("1/2:1", []float64{4}, []string{"pass"}, calls)
	b.Max = 128
	_, err := MergeCapacity([]string{"a.json", "b.json"}, []*runrecord.Capacity{a, b})
	require.ErrorContains(t, err, "a.json and b.json ran different searches: range 4–64 vs 4–128")
	_, err = MergeCapacity([]string{"a.json", "b.json"}, []*runrecord.Capacity{a, nil})
	require.ErrorContains(t, err, "b.json has no capacity section")
	got, err := MergeCapacity([]string{"a.json", "b.json"}, []*runrecord.Capacity{nil, nil})
	require.NoError(t, err)
	require.Nil(t, got)
}

// A merged answer says how sure it is, as each instance's did: the
// confidence and the sustain window of the answer given (past a parting,
// the lowest instance's, with the levels above it it could not decide),
// and a window every failing instance only could not decide stays
// undecided.
func TestMergedCapacityKeepsHowSureItIs(t *testing.T) {
	calls := [][]float64{{10, 20}, {10, 20}, {10, 20}, {10, 20}}
	a := capacityPart("0:1/2", []float64{4, 8, 16, 11.3}, []string{"pass", "pass", "fail", "pass"}, calls)
	b := capacityPart("1/2:1", []float64{4, 8, 16, 22.6}, []string{"pass", "pass", "pass", "fail"}, calls)
	for _, c := range []*runrecord.Capacity{a, b} {
		c.Confidence = 0.95
	}
	a.SustainedS, a.UndecidedAbove = ptr(60.0), []float64{16}
	a.Windows[2].Undecided = true
	b.SustainedS = ptr(90.0)
	got, err := MergeCapacity([]string{"a.json", "b.json"}, []*runrecord.Capacity{a, b})
	require.NoError(t, err)
	require.InDelta(t, 0.95, got.Confidence, 0)
	require.Equal(t, 11.3, *got.Capacity)
	require.InDelta(t, 60, *got.SustainedS, 0, "the lowest answer's sustain window")
	require.Equal(t, []float64{16}, got.UndecidedAbove)
	require.True(t, got.Windows[2].Undecided, "only 0:1/2 failed window 3, and it could not decide")
	require.Contains(t, capacityAnswer(got), "(each objective 95 % sure to hold at it; sustained 60 s; the calls at 16 req/s could not decide")
}

// The GPUs' energy of a window is the server's, which every instance read:
// the merged window keeps it once (an instance without an exporter adds
// nothing), never a sum.
func TestMergedCapacityKeepsTheWindowsEnergy(t *testing.T) {
	levels, verdicts := []float64{4, 8}, []string{"pass", "fail"}
	ttfts := [][]float64{{10, 20}, {300, 400}}
	a, b := capacityPart("0:1/2", levels, verdicts, ttfts), capacityPart("1/2:1", levels, verdicts, ttfts)
	j, w := 600.0, 200.0
	b.Windows[0].Energy = &runrecord.CapacityEnergy{Joules: &j, AvgPowerW: &w}
	got, err := MergeCapacity([]string{"a.json", "b.json"}, []*runrecord.Capacity{a, b})
	require.NoError(t, err)
	require.NotNil(t, got.Windows[0].Energy)
	require.InDelta(t, 600, *got.Windows[0].Energy.Joules, 0)
	require.Nil(t, got.Windows[1].Energy)
}
