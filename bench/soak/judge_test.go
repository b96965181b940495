package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// run is 2.5 minutes of samples every 5 s at 100k tokens/s (100 calls/s):
// the rest of the heap and the Trend store grow by the given MB/min.
func run(otherPerMin, trendPerMin float64) ([]sample, summary) {
	var ss []sample
	for at := 5 * time.Second; at <= 150*time.Second; at += 5 * time.Second {
		m := at.Minutes()
		wobble := float64(at/(5*time.Second)%3) - 1 // ±1 MB of answers in flight
		trend := trendPerMin * m
		ss = append(ss, sample{at: at, heapMB: 25 + wobble + otherPerMin*m + trend, trendMB: trend, rssMB: 100})
	}
	return ss, summary{DurationSec: 150, Requests: 15_000, OutputTokens: 15_000_000,
		TrendSamples: map[string]float64{"llm_ttft": 210_000, "http_req_duration": 150_000}} // 2 400/s × 8 B: 1.1 MB/min
}

func TestSlopeJudgesTheRestAndTheTrendStoreApart(t *testing.T) {
	t.Parallel()
	j := judgement{maxGrowth: 5, maxTrendPerToken: 0.5, warmup: 30 * time.Second}
	// The default: ~0.2 B per token into the Trend store (1.1 MB/min at
	// 100k tokens/s), the rest flat.
	require.NoError(t, j.slope(run(0, 1.1)))
	// The rest growing (8 B a token would be 46 MB/min here).
	require.ErrorContains(t, j.slope(run(6, 1.1)), "but its Trend store grew 6.0")
	// A Trend sample per token: 8 B a token into the store, the rest flat.
	require.ErrorContains(t, j.slope(run(0, 46)), "per output token (allowed 0.50)")
	// Without a per-token bound the store is only reported.
	j.maxTrendPerToken = 0
	require.NoError(t, j.slope(run(0, 46)))
	// Too few samples after warm-up to judge.
	j.warmup = 140 * time.Second
	require.ErrorContains(t, j.slope(run(0, 0)), "too few to judge")
}
