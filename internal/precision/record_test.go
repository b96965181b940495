package precision

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/report"
)

// A gate's record: a target the calls could not bound has null ends, never
// 0; one they did has its interval around its estimate; both render.
func TestRecordAndReport(t *testing.T) {
	ts, err := ParseTargets("until", map[string]string{"ttft": "p95±10%", "e2e": "p99±1%"})
	require.NoError(t, err)
	g := New(ts, time.Minute)
	t0 := time.Unix(0, 0)
	require.True(t, g.Open(t0))
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 300 {
		now := t0.Add(time.Duration(i) * 10 * time.Millisecond)
		g.Observe(0, 1000+200*rng.ExpFloat64(), now)
		g.Observe(1, 100+10*rng.NormFloat64(), now)
	}
	require.False(t, g.Open(t0.Add(time.Minute)))
	rec := g.Result().Record("0:1/2")
	require.Equal(t, "cap", rec.Outcome)
	require.InDelta(t, 60, *rec.EndedS, 1e-9)
	e2e, ttft := rec.Targets[0], rec.Targets[1]
	require.Equal(t, "e2e p99±1%", e2e.Target)
	require.NotNil(t, e2e.Lo, "300 calls bound a p99 from below")
	require.Nil(t, e2e.Hi, "but not from above (368 would): unknown, not 0")
	require.NotNil(t, e2e.Estimate)
	require.False(t, e2e.Met)
	require.NotNil(t, ttft.Lo)
	require.True(t, *ttft.Lo <= *ttft.Estimate && *ttft.Estimate <= *ttft.Hi)
	require.True(t, ttft.Met)
	raw, err := json.Marshal(rec)
	require.NoError(t, err)
	require.Contains(t, string(raw), `"hi_ms":null`)

	text := report.PrecisionText(rec)
	require.Contains(t, text, "time cap reached after 60.0 s")
	require.Contains(t, text, "(too few calls for an upper end)")
	require.Regexp(t, `ttft p95±10%\s+300\s+\S+\s+\S+–\S+\s+at \d`, text, "the met target's row: calls, estimate, interval, when")
}
