package precision

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseTargets(t *testing.T) {
	ts, err := ParseTargets("until", map[string]string{"ttft": "p95±5%", "e2e": "p99 +- 200ms"})
	require.NoError(t, err)
	require.Equal(t, []Target{
		{Text: "e2e p99±200ms", Figure: "e2e", Quantile: 0.99, Margin: 200},
		{Text: "ttft p95±5%", Figure: "ttft", Quantile: 0.95, Margin: 0.05, Relative: true},
	}, ts)
	for spec, want := range map[string]string{
		"p95":       "want a percentile and a margin",
		"p100±5%":   "unknown percentile",
		"p95±0%":    "must be a percentage above 0",
		"p95±-2ms":  "neither a percentage",
		"p95±fast":  "neither a percentage",
		"95±5%":     "want a percentile and a margin",
		"p95±100%":  "must be a percentage above 0 and below 100",
		"p9x5±10ms": "unknown percentile",
	} {
		_, err := ParseTargets("until", map[string]string{"ttft": spec})
		require.ErrorContainsf(t, err, want, "%s", spec)
		require.ErrorContainsf(t, err, "until.ttft", "%s: the error names the option", spec)
	}
	_, err = ParseTargets("until", map[string]string{"latency": "p95±5%"})
	require.ErrorContains(t, err, `unknown figure "latency"`)
	_, err = ParseTargets("until", nil)
	require.ErrorContains(t, err, "no target")
}

// A steady lognormal server: the gate is met once enough calls bound each
// target (a p95 needs far fewer than a p99) and not before the interval's
// minimum sample; a cap ends a gate that cannot be met.
func TestGateMetByEnoughCalls(t *testing.T) {
	ts, err := ParseTargets("until", map[string]string{"ttft": "p95±5%", "e2e": "p99±10%"})
	require.NoError(t, err)
	g := New(ts, time.Hour)
	rng := rand.New(rand.NewPCG(3, 4))
	t0 := time.Unix(0, 0)
	require.True(t, g.Open(t0))
	calls := 0
	for g.Open(t0.Add(time.Duration(calls) * time.Millisecond)) {
		calls++
		now := t0.Add(time.Duration(calls) * time.Millisecond)
		g.Observe(0, 200*(1+0.3*rng.NormFloat64()*rng.NormFloat64()), now) // e2e
		g.Observe(1, 50*rng.ExpFloat64()+20, now)                          // ttft
		require.Less(t, calls, 200000, "never met")
	}
	r := g.Result()
	require.Equal(t, OutcomeMet, r.Outcome)
	require.GreaterOrEqual(t, calls, 368, "a p99 is bounded by no fewer calls")
	for _, tr := range r.Targets {
		require.True(t, tr.Met, tr.Text)
		require.True(t, tr.Bounded, tr.Text)
		require.LessOrEqual(t, tr.HalfWidth, tr.Margin*tr.Estimate, tr.Text)
		require.True(t, tr.Lo <= tr.Estimate && tr.Estimate <= tr.Hi, tr.Text)
	}
	require.Equal(t, max(r.Targets[0].MetAt, r.Targets[1].MetAt), r.EndedAt, "the gate ends when its last target is met")
}

func TestGateCap(t *testing.T) {
	ts, err := ParseTargets("until", map[string]string{"ttft": "p99±1%"})
	require.NoError(t, err)
	g := New(ts, 10*time.Second)
	t0 := time.Unix(0, 0)
	require.True(t, g.Open(t0))
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range 50 {
		g.Observe(0, 100*rng.ExpFloat64(), t0.Add(time.Duration(i)*time.Millisecond))
	}
	require.True(t, g.Open(t0.Add(9*time.Second)))
	require.False(t, g.Open(t0.Add(10*time.Second)))
	r := g.Result()
	require.Equal(t, OutcomeCap, r.Outcome)
	require.False(t, r.Targets[0].Met)
	require.False(t, r.Targets[0].Bounded, "50 calls cannot bound a p99")
	require.EqualValues(t, 50, r.Targets[0].Calls)
	g.Observe(0, 5, t0.Add(11*time.Second)) // late calls still count, the outcome stays
	require.Equal(t, OutcomeCap, g.Result().Outcome)
}
