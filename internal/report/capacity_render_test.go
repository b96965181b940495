package report

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/report/compare"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// searched is a found capacity of c req/s: windows at 1, 2, 4 passing, 8
// failing early, then c sustained.
func searched(c float64, objectives ...string) *runrecord.Capacity {
	if len(objectives) == 0 {
		objectives = []string{"ttft p95<2s"}
	}
	capacity := &runrecord.Capacity{Model: "rate", Unit: "req/s", Min: 1, Max: 64, WindowS: 20, WarmupS: 5, Precision: 0.05, Share: 0.8,
		Outcome: "found", Capacity: ptr(c), LastPass: ptr(c), FirstFail: ptr(c * 1.04), Binding: "ttft p95<2s",
		Boundary: "smooth", Recommended: ptr(0.8 * c)}
	for _, o := range objectives {
		capacity.Objectives = append(capacity.Objectives, runrecord.CapacityObjective{Text: o, Figure: "ttft", Quantile: 0.95, Limit: 2000})
	}
	for i, lv := range []float64{1, 2, 4, 8, c} {
		w := runrecord.CapacityWindow{Index: i + 1, Phase: "bracket", Level: lv, Verdict: "pass", Reason: "closest: ttft p95 at 40 %", Settled: true,
			Calls: int(lv * 15), TTFT: runrecord.CapacityPercentiles{P95: ptr(200 * lv)}, OutputTokensSec: ptr(50 * lv), Goodput: ptr(lv)}
		if lv == 8 {
			w.Verdict, w.Reason, w.EarlyStopS, w.Failed = "fail", "over-saturated: TTFT rising with calls in flight", ptr(9.0), 2
			w.TTFT.P95 = ptr(6000.0)
		}
		if i == 4 {
			w.Phase = "sustain"
		}
		capacity.Windows = append(capacity.Windows, w)
	}
	return capacity
}

// The section in the text, the HTML (the answer, both charts with the
// capacity marked, every window) and the run record.
func TestCapacitySection(t *testing.T) {
	run := runOf(call(t0, "", 100))
	run.SetCapacity(searched(6.2))
	text, htmlDoc, raw, err := Render(run, nil, RenderOptions{})
	require.NoError(t, err)
	require.Contains(t, text, "capacity search (rate model, 1.00–64.0 req/s, windows of 20s after 5s warm-up; ttft p95<2s)")
	require.Contains(t, text, "capacity 6.20 req/s (first fail 6.45, precision 5.0%), a smooth boundary; bound by ttft p95<2s; "+
		"plan production at 4.96 req/s (80.0% of it)")
	require.Regexp(t, `(?m)^  4 +bracket +8\.00 +fail +120 \(2 failed\) +6\.00s .* at 9s +over-saturated`, text)
	page := string(htmlDoc)
	require.Contains(t, page, `<table id="capacity">`)
	require.Contains(t, page, `id="capacity-ttft"`)
	require.Contains(t, page, `id="capacity-throughput"`)
	require.Contains(t, page, "capacity 6.20", "the capacity is marked on the charts")
	var rec struct {
		Capacity *runrecord.Capacity `json:"capacity"`
	}
	require.NoError(t, json.Unmarshal(raw, &rec))
	require.NotNil(t, rec.Capacity)
	require.Len(t, rec.Capacity.Windows, 5)
	require.Nil(t, rec.Capacity.Windows[0].TPOT.P95, "a figure not measured stays null")

	text, _, _, err = Render(runOf(call(t0, "", 100)), nil, RenderOptions{})
	require.NoError(t, err)
	require.NotContains(t, text, "capacity search")
}

// The answer says how sure it is: each verdict's confidence, how long the
// answer held in its sustain window, and, when a level above it could not
// decide, that the capacity may be higher; an undecided window says so in
// the table.
func TestCapacityAnswerSaysHowSure(t *testing.T) {
	c := searched(4.9)
	c.Confidence, c.SustainedS = 0.95, ptr(60.0)
	require.Contains(t, capacityAnswer(c), "capacity 4.90 req/s (95 % sure ttft p95<2s holds at it; sustained 60 s) (first fail 5.10")
	c.UndecidedAbove = []float64{5.1}
	c.Windows[3].Undecided = true
	require.Contains(t, capacityAnswer(c), "; sustained 60 s; the calls at 5.1 req/s could not decide: it may be higher)")
	require.Regexp(t, `(?m)^  4 +bracket +8\.00 +fail \(undecided\)`, CapacityText(c))
	two := searched(4.9, "ttft p95<2s", "errors <5%")
	two.Confidence = 0.95
	require.Contains(t, capacityAnswer(two), "capacity 4.90 req/s (each objective 95 % sure to hold at it; not yet sustained)")
	below := &runrecord.Capacity{Unit: "req/s", Min: 2, Outcome: "below_min", UndecidedAbove: []float64{2}}
	require.Equal(t, "capacity below min: the calls at the lowest level, 2.00 req/s, could not show it holds "+
		"(a longer maxWindow lets its window run until they can)", capacityAnswer(below))
}

func TestCapacityOutcomesRead(t *testing.T) {
	below := &runrecord.Capacity{Unit: "req/s", Min: 2, Outcome: "below_min", Binding: "e2e p99<30s"}
	require.Equal(t, "capacity below min: the lowest level, 2.00 req/s, already failed; bound by e2e p99<30s", capacityAnswer(below))
	above := &runrecord.Capacity{Unit: "in flight", Max: 256, Share: 0.8, Outcome: "above_max", Capacity: ptr(256.0), Recommended: ptr(204.0)}
	require.Equal(t, "capacity above max: the highest level, 256 in flight, passed every objective; plan production at 204 in flight (80.0% of it)",
		capacityAnswer(above))
}

// A drop past both searches' precisions is worse and the finding
// capacity_dropped; within them it is the same; other objectives are not
// compared; an unfinished or topped-out search is never a drop.
func TestCapacityAgainstTheBaseline(t *testing.T) {
	ch := compare.Capacity(searched(5), searched(6.2))
	require.Equal(t, runrecord.VerdictWorse, ch.Verdict)
	require.InDelta(t, -0.194, *ch.DeltaPct, 0.001)
	require.Equal(t, runrecord.VerdictSame, compare.Capacity(searched(6), searched(6.2)).Verdict, "3 % is within 5 % + 5 %")
	require.Equal(t, runrecord.VerdictBetter, compare.Capacity(searched(8), searched(6.2)).Verdict)
	other := compare.Capacity(searched(3, "ttft p95<1s"), searched(6.2))
	require.Equal(t, runrecord.VerdictSame, other.Verdict)
	require.Contains(t, other.Note, "different objectives")
	unfinished := searched(3)
	unfinished.Outcome = "unfinished"
	require.Equal(t, runrecord.VerdictSame, compare.Capacity(unfinished, searched(6.2)).Verdict, "a lower bound is not a drop")
	require.Equal(t, runrecord.VerdictWorse, compare.Capacity(&runrecord.Capacity{Model: "rate", Outcome: "below_min", Precision: 0.05,
		Objectives: searched(1).Objectives}, searched(6.2)).Verdict)
	require.Nil(t, compare.Capacity(nil, searched(6.2)))

	base := runOf(call(t0, "", 100))
	base.SetCapacity(searched(6.2))
	baseRec := NewRecord(base, nil, nil, nil)
	baseRec.Capacity = base.Capacity
	cur := runOf(call(t0, "", 100))
	cur.SetCapacity(searched(5))
	text, htmlDoc, raw, err := Render(cur, nil, RenderOptions{Baseline: baseRec})
	require.NoError(t, err)
	require.Contains(t, text, "capacity_dropped")
	require.Contains(t, text, "baseline, capacity: worse: 6.20 → 5.00 req/s (-19.4%, within ±10.0% counts as the same)")
	require.Contains(t, string(htmlDoc), `id="capacity-comparison"`)
	var rec struct {
		Comparison struct {
			Capacity *runrecord.CapacityChange `json:"capacity"`
		} `json:"comparison"`
	}
	require.NoError(t, json.Unmarshal(raw, &rec))
	require.Equal(t, runrecord.VerdictWorse, rec.Comparison.Capacity.Verdict)
}

// A search over a trace's arrivals reads both ways: req/s, and the speed-up
// of the recording; a merge whose instances parted takes the lowest answer
// and its speed-up; a trace on one part only is another search.
func TestCapacityOfATraceReadsAsItsSpeedUp(t *testing.T) {
	c := searched(20)
	c.Trace = &runrecord.CapacityTrace{Name: "prod.jsonl", Rows: 40, MeanRate: 5}
	c.WithTraceScales()
	require.Equal(t, "capacity 20.0 req/s (prod.jsonl at 4× its recorded speed) (first fail 20.8, precision 5.0%), a smooth boundary; "+
		"bound by ttft p95<2s; plan production at 16.0 req/s (80.0% of it), the trace at 3.2×", capacityAnswer(c))

	traced := func(segment string, levels []float64, verdicts []string) *runrecord.Capacity {
		p := capacityPart(segment, levels, verdicts, [][]float64{{10, 20}, {30, 40}, {50, 60}})
		p.Trace = &runrecord.CapacityTrace{Name: "prod.jsonl", Rows: 40, MeanRate: 5}
		p.WithTraceScales()
		return p
	}
	a, b := traced("0:1/2", []float64{4, 8, 16}, []string{"pass", "pass", "pass"}), traced("1/2:1", []float64{4, 8, 16}, []string{"pass", "fail", "fail"})
	got, err := MergeCapacity([]string{"a.json", "b.json"}, []*runrecord.Capacity{a, b})
	require.NoError(t, err)
	require.NotEmpty(t, got.Disagreement)
	require.Equal(t, 4.0, *got.Capacity)
	require.InDelta(t, 0.8, *got.Trace.Scale, 1e-12)
	require.InDelta(t, 3.2, *a.Trace.Scale, 1e-12, "the instance's own section is left as it was")

	b.Trace = nil
	_, err = MergeCapacity([]string{"a.json", "b.json"}, []*runrecord.Capacity{a, b})
	require.ErrorContains(t, err, "other arrivals")
}
