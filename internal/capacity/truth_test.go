package capacity

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/queuesim"
)

// The search against a queue's truth, on the fake clock: 4 slots of a
// fixed 200 ms call (the first token 15 ms in), TTFT p95<600ms, windows of
// the default 20 s and of a user's short 8 s, at 10 % precision, for
// constant, Poisson and bursty (gamma, cv 2) arrivals. The truth is the simulated queue's boundary (queuesim). The
// answer is never past the truth by more than the precision; below it by
// more, the answer says which level could not decide. The end-to-end test
// (e2e/capacity_truth_test.go) asks the same of llm-sim.
func TestSearchAgainstTheQueuesTruth(t *testing.T) {
	t.Parallel()
	q := queuesim.Queue{Slots: 4, Service: 0.2, FirstToken: 0.015}
	const precision = 0.1
	for _, c := range []struct {
		name     string
		arrivals string
		p        queuesim.Process
	}{{"constant", ArrivalsConstant, queuesim.Constant()}, {"poisson", ArrivalsPoisson, queuesim.Poisson()},
		{"bursty", ArrivalsBursty, queuesim.Bursty(2)}} {
		truth, err := q.Boundary(c.p, 0.95, 0.6, 200_000, 1, 0.005)
		require.NoError(t, err)
		for _, window := range []time.Duration{DefaultWindow, 8 * time.Second} {
			for seed := uint64(1); seed <= 3; seed++ {
				t.Run(fmt.Sprintf("%s/%v/%d", c.name, window, seed), func(t *testing.T) {
					t.Parallel() // a search and a simulated queue of its own, on its own seed
					sim := &queueSim{slots: 4, service: 200 * time.Millisecond, prefill: 15 * time.Millisecond, tokens: 20,
						gaps: c.p.Gaps(seed)}
					s, err := New(Config{Model: ModelRate, Min: 4, Max: 64, Window: window, Precision: precision,
						Arrivals: c.arrivals, CV: c.p.CV, Objectives: objectives(t, map[string]string{"ttft": "p95<600ms"})})
					require.NoError(t, err)
					sim.run(t, s, 3*time.Hour)
					r := s.Result()
					require.Equal(t, OutcomeFound, r.Outcome, String(r))
					a := *r.Capacity
					t.Logf("truth %.3g: %s", truth, String(r))
					require.LessOrEqual(t, a, truth*(1+precision), "never confidently past the truth")
					if a < truth*(1-precision) {
						require.NotEmpty(t, r.UndecidedAbove, "an answer this low says a level above it could not decide")
					}
					require.NotNil(t, r.SustainedS)
					if c.p.CV == 0 {
						require.GreaterOrEqual(t, a, truth*(1-precision))
					}
				})
			}
		}
	}
}

// The issue's case: 4 slots, a fixed 490 ms call (100 ms to the first
// token), TTFT p95<400ms, rate 1–32 in 8 s windows at 10 % precision, under
// Poisson arrivals. The queue's truth is near 5.0 req/s; trusting windows
// of 19–23 calls and cutting their last-sent calls answered 6.73.
func TestTheIssuesSearch(t *testing.T) {
	t.Parallel()
	q := queuesim.Queue{Slots: 4, Service: 0.49, FirstToken: 0.1}
	truth, err := q.Boundary(queuesim.Poisson(), 0.95, 0.4, 200_000, 1, 0.005)
	require.NoError(t, err)
	require.InDelta(t, 5.0, truth, 0.1)
	sim := &queueSim{slots: 4, service: 490 * time.Millisecond, prefill: 100 * time.Millisecond, tokens: 40,
		gaps: queuesim.Poisson().Gaps(1)}
	s, err := New(Config{Model: ModelRate, Min: 1, Max: 32, Window: 8 * time.Second, Precision: 0.1, Arrivals: ArrivalsPoisson, CV: 1,
		Objectives: objectives(t, map[string]string{"ttft": "p95<400ms"})})
	require.NoError(t, err)
	sim.run(t, s, 3*time.Hour)
	r := s.Result()
	dump(t, s)
	require.Equal(t, OutcomeFound, r.Outcome, String(r))
	require.LessOrEqual(t, *r.Capacity, truth*1.1, String(r))
	if *r.Capacity < truth*0.9 {
		require.NotEmpty(t, r.UndecidedAbove, String(r))
	}
	for _, w := range r.Windows {
		if w.Verdict == "pass" {
			require.GreaterOrEqual(t, w.Calls, 59, "no window passes a p95 on fewer than 59 calls")
		}
	}
}
