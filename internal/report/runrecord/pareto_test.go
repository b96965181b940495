package runrecord

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func ptr(v float64) *float64 { return &v }

// TestParetoPointsMarkTheFront: a level is on the front unless another gave
// both more output tokens/s and faster streams; a stage with an unknown
// decode speed is left out, as is a window without TPOT or throughput.
func TestParetoPointsMarkTheFront(t *testing.T) {
	t.Parallel()
	stages := []StageRecord{
		{Concurrency: 1, OutputTokensPerSec: 50, TokensPerSecP50: 50},
		{Concurrency: 2, OutputTokensPerSec: 95, TokensPerSecP50: 48},
		{Concurrency: 4, OutputTokensPerSec: 180, TokensPerSecP50: 45},
		{Concurrency: 8, OutputTokensPerSec: 200, TokensPerSecP50: 25},
		{Concurrency: 16, OutputTokensPerSec: 190, TokensPerSecP50: 12}, // past the knee: beaten by 8 on both
		{Concurrency: 32, OutputTokensPerSec: 150, TokensPerSecP50: 0},  // unknown speed (FiniteOr0)
	}
	pts := ParetoPoints(stages, nil)
	require.Len(t, pts, 5)
	var onFront []float64
	for i, p := range pts {
		require.Equal(t, ParetoSourceStage, p.Source)
		require.Equal(t, stages[i].Concurrency, p.Level)
		require.Equal(t, stages[i].OutputTokensPerSec, p.OutputTokensPerSec)
		require.Equal(t, stages[i].TokensPerSecP50, p.PerUserTokensPerSec)
		if p.OnFront {
			onFront = append(onFront, p.Level)
		}
	}
	require.Equal(t, []float64{1, 2, 4, 8}, onFront)
	front := ParetoFront(pts)
	require.Equal(t, []float64{8, 4, 2, 1}, []float64{front[0].Level, front[1].Level, front[2].Level, front[3].Level},
		"the front by interactivity, slowest streams first")

	require.Nil(t, ParetoPoints(stages[:1], nil), "one stage is no trade-off")
	require.Nil(t, ParetoPoints(nil, nil))

	c := &Capacity{Model: "rate", Windows: []CapacityWindow{
		{Level: 2, OutputTokensSec: ptr(100), TPOT: CapacityPercentiles{P50: ptr(20)}},
		{Level: 4, OutputTokensSec: ptr(190), TPOT: CapacityPercentiles{P50: ptr(25)}},
		{Level: 6, OutputTokensSec: nil, TPOT: CapacityPercentiles{P50: ptr(40)}},
		{Level: 8, OutputTokensSec: ptr(180), TPOT: CapacityPercentiles{P50: ptr(50)}},
	}}
	pts = ParetoPoints(nil, c)
	require.Len(t, pts, 3)
	for i, want := range []struct {
		window  int
		perUser float64
		front   bool
	}{{0, 50, true}, {1, 40, true}, {3, 20, false}} {
		require.Equal(t, ParetoSourceCapacity, pts[i].Source)
		require.Equal(t, want.window, *pts[i].Window)
		require.True(t, pts[i].ByRate)
		require.InDelta(t, want.perUser, pts[i].PerUserTokensPerSec, 1e-9, "1000 / TPOT p50")
		require.Equal(t, want.front, pts[i].OnFront, "window %d", want.window)
	}
	require.Len(t, ParetoPoints(stages[:1], c), 3, "a lone stage adds no point beside a search")
}
