package capacity

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/measure"
)

// callsOf makes a window's calls from TTFTs in ms, in the order sent; a
// negative value is a call still in flight at judging time, its age −v ms.
func callsOf(ttfts ...float64) []judgedCall {
	out := make([]judgedCall, len(ttfts))
	for i, v := range ttfts {
		if v < 0 {
			out[i] = judgedCall{age: time.Duration(-v * float64(time.Millisecond))}
			continue
		}
		d := time.Duration(v * float64(time.Millisecond))
		out[i] = judgedCall{f: &finished{ok: true, ttft: measure.Of(d), e2e: measure.Of(d + 100*time.Millisecond)}}
	}
	return out
}

func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

var p95TTFT = Objective{Text: "ttft p95<400ms", Figure: FigureTTFT, Quantile: 0.95, Limit: 400}

// A p95 passes at 95 % only from 59 calls all within the limit (0.95^59 <
// 0.05): 58 fast calls say nothing yet.
func TestAP95PassesFrom59Calls(t *testing.T) {
	b := judgeDuration(p95TTFT, callsOf(repeat(100, 58)...), 1)
	require.Equal(t, verdictUndecided, b.verdict)
	require.True(t, math.IsNaN(b.upper), "no call bounds a p95 of 58 from above")
	b = judgeDuration(p95TTFT, callsOf(repeat(100, 59)...), 1)
	require.Equal(t, verdictPass, b.verdict)
	require.InDelta(t, 100, b.upper, 0)
	require.Equal(t, 59, b.calls)
}

// Bursty arrivals' calls are not independent even where no burst queued
// them yet: with cv 2 a window's calls count as a quarter as many, so a p95
// passes from 4 × 59 calls within the limit, and an error rate's counts
// shrink alike (under 5 %: 4 × 59 calls without a failure).
func TestBurstyArrivalsPassFromMoreCalls(t *testing.T) {
	require.Equal(t, verdictUndecided, judgeDuration(p95TTFT, callsOf(repeat(100, 4*59-1)...), 4).verdict)
	require.Equal(t, verdictPass, judgeDuration(p95TTFT, callsOf(repeat(100, 4*59)...), 4).verdict)
	errs := Objective{Text: "errors <5%", Figure: FigureErrors, Limit: 0.05}
	require.Equal(t, verdictUndecided, judgeErrors(errs, callsOf(repeat(100, 4*58)...), 4).verdict)
	require.Equal(t, verdictPass, judgeErrors(errs, callsOf(repeat(100, 4*59)...), 4).verdict)
	require.Equal(t, verdictPass, judgeErrors(errs, callsOf(repeat(100, 59)...), 1).verdict)
	// A fail needs more evidence too: 10 % of 100 calls past the limit
	// shows a p95 broken when they are independent, not at a quarter.
	vals := append(repeat(100, 90), repeat(500, 10)...)
	require.Equal(t, verdictFail, judgeDuration(p95TTFT, callsOf(spreadOut(vals)...), 1).verdict)
	require.Equal(t, verdictUndecided, judgeDuration(p95TTFT, callsOf(spreadOut(vals)...), 4).verdict)
}

// spreadOut interleaves vals' two halves of distinct values evenly (so no
// two calls past a limit are neighbours).
func spreadOut(vals []float64) []float64 {
	var lo, hi []float64
	for _, v := range vals {
		if v > vals[0] {
			hi = append(hi, v)
		} else {
			lo = append(lo, v)
		}
	}
	out := make([]float64, 0, len(vals))
	every := len(lo) / max(len(hi), 1)
	for i, v := range lo {
		out = append(out, v)
		if len(hi) > 0 && (i+1)%every == 0 {
			out, hi = append(out, hi[0]), hi[1:]
		}
	}
	return append(out, hi...)
}

// A call still in flight is never taken as within the limit: for the upper
// bound it is slower than every call that ended. 59 fast calls and one in
// flight no longer pass; 100 fast ones and one in flight do.
func TestCensoredCallsCountAgainstAPass(t *testing.T) {
	b := judgeDuration(p95TTFT, callsOf(append(repeat(100, 59), -50)...), 1)
	require.Equal(t, verdictUndecided, b.verdict)
	require.Equal(t, 1, b.censored)
	b = judgeDuration(p95TTFT, callsOf(append(repeat(100, 100), -50)...), 1)
	require.Equal(t, verdictPass, b.verdict)
}

// Calls past the limit fail the objective once the lower bound is past it:
// 10 of 50 at 900 ms is a p95 known to be past 400 ms.
func TestFailFromTheLowerBound(t *testing.T) {
	vals := repeat(100, 50)
	for i := 0; i < 50; i += 5 { // spread out, so they do not cluster
		vals[i] = 900
	}
	b := judgeDuration(p95TTFT, callsOf(vals...), 1)
	require.Equal(t, verdictFail, b.verdict)
	require.Greater(t, b.lower, 400.0)
	// The same figures, but the slow calls still in flight for 300 ms: their
	// TTFT is unknown (the first token may have come), so nothing fails.
	for i, v := range vals {
		if v == 900 {
			vals[i] = -300
		}
	}
	b = judgeDuration(p95TTFT, callsOf(vals...), 1)
	require.Equal(t, verdictUndecided, b.verdict)
	// For E2E their age is a lower bound: 900 ms in flight is past 400 ms.
	for i, v := range vals {
		if v == -300 {
			vals[i] = -900
		}
	}
	e2e := Objective{Text: "e2e p95<400ms", Figure: FigureE2E, Quantile: 0.95, Limit: 400}
	b = judgeDuration(e2e, callsOf(vals...), 1)
	require.Equal(t, verdictFail, b.verdict)
}

// Calls past the limit that come in a run (a burst queued together) are one
// event, not many: the same count spread out decides, in a run it does not.
func TestClusteredCallsCountAsFewer(t *testing.T) {
	spread := repeat(100, 200)
	for i := 0; i < 200; i += 20 { // 10 of 200, one every 20 calls
		spread[i] = 900
	}
	b := judgeDuration(p95TTFT, callsOf(spread...), 1)
	require.Equal(t, verdictUndecided, b.verdict, "5 %% past the limit: undecided either way")
	few := repeat(100, 300)
	for i := 0; i < 300; i += 100 { // 3 of 300, spread: a pass
		few[i] = 900
	}
	require.Equal(t, verdictPass, judgeDuration(p95TTFT, callsOf(few...), 1).verdict)
	run := repeat(100, 300)
	for i := 150; i < 153; i++ { // the same 3 in a row
		run[i] = 900
	}
	require.InDelta(t, 3, inflation(append([]float64(nil), run...), func(v float64) bool { return v > 400 }), 1e-9)
	require.Equal(t, verdictPass, judgeDuration(p95TTFT, callsOf(run...), 1).verdict, "300/3 = 100 effective calls, 1 past")
	long := repeat(100, 300)
	for i := 150; i < 159; i++ { // 9 in a row: 300/9 = 33 effective calls, too few
		long[i] = 900
	}
	require.Equal(t, verdictUndecided, judgeDuration(p95TTFT, callsOf(long...), 1).verdict)
}

// A failed call never completed: its E2E is at least its duration, and its
// TTFT, when no token came, too; it is never taken as within a limit.
func TestFailedCallsAreCensored(t *testing.T) {
	calls := callsOf(repeat(100, 70)...)
	for i := range 5 {
		calls[10*i].f = &finished{ok: false, e2e: measure.Of(50 * time.Millisecond)}
	}
	b := judgeDuration(p95TTFT, calls, 1)
	require.Equal(t, 5, b.censored)
	require.Equal(t, verdictUndecided, b.verdict, "65 within, 5 unknown: not enough for a pass")
	// A failed call that had its first token keeps its TTFT.
	calls[0].f.ttft = measure.Of(80 * time.Millisecond)
	require.Equal(t, 4, judgeDuration(p95TTFT, calls, 1).censored)
}

// The error rate's bounds are Clopper–Pearson's: no failure among 299 calls
// bounds it under 1 % (1 − 0.05^(1/299) = 0.99 %), among 298 not.
func TestErrorRateBounds(t *testing.T) {
	errs := Objective{Text: "errors <1%", Figure: FigureErrors, Limit: 0.01}
	b := judgeErrors(errs, callsOf(repeat(100, 299)...), 1)
	require.Equal(t, verdictPass, b.verdict)
	require.InDelta(t, 1-math.Pow(0.05, 1.0/299), b.upper, 1e-9)
	require.Equal(t, verdictUndecided, judgeErrors(errs, callsOf(repeat(100, 298)...), 1).verdict)
	calls := callsOf(repeat(100, 100)...)
	for i := range 6 {
		calls[15*i].f.ok = false
	}
	b = judgeErrors(errs, calls, 1)
	require.Equal(t, verdictFail, b.verdict, "6 of 100 failed: past 1 %% at 95 %%")
	require.InDelta(t, 0.06, b.observed, 1e-12)
	// A limit of 0 errors: any failure fails, none passes.
	zero := Objective{Text: "errors <0%", Figure: FigureErrors}
	require.Equal(t, verdictFail, judgeErrors(zero, calls, 1).verdict)
	require.Equal(t, verdictPass, judgeErrors(zero, callsOf(100, 100), 1).verdict)
	require.Equal(t, verdictUndecided, judgeErrors(zero, callsOf(100, -50), 1).verdict, "a call in flight may still fail")
}
