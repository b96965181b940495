package protocol

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		h    http.Header
		want time.Duration
		ok   bool
	}{
		{http.Header{"Retry-After": {"2"}}, 2 * time.Second, true},
		{http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond, true},
		{http.Header{"Retry-After-Ms": {"150"}, "Retry-After": {"9"}}, 150 * time.Millisecond, true},
		{http.Header{"Retry-After": {now.Add(3 * time.Second).Format(http.TimeFormat)}}, 3 * time.Second, true},
		{http.Header{"Retry-After": {now.Add(-time.Hour).Format(http.TimeFormat)}}, 0, true},
		{http.Header{"Retry-After": {"soon"}}, 0, false},
		{http.Header{"Retry-After": {"-1"}}, 0, false},
		{http.Header{}, 0, false},
	}
	for _, c := range cases {
		got, ok := ParseRetryAfter(c.h, now)
		require.Equal(t, c.ok, ok, "%v", c.h)
		require.Equal(t, c.want, got, "%v", c.h)
	}
}

func TestParseServerTiming(t *testing.T) {
	t.Parallel()
	got := ParseServerTiming(`queue;dur=1.5, prefill;desc="p";dur=3, cache;desc=hit, total;dur="7.25", ;dur=1, bad;dur=x`)
	require.Equal(t, map[string]float64{"queue": 1.5, "prefill": 3, "total": 7.25}, got)
	require.Nil(t, ParseServerTiming(""))
}

func TestParseRetryAfterRejectsUnusableNumbers(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, v := range []string{"NaN", "Inf", "+Inf", "-0.5", "1e400"} {
		_, ok := ParseRetryAfter(http.Header{"Retry-After": {v}}, now)
		require.False(t, ok, v)
	}
	// A bad retry-after-ms falls through to Retry-After.
	got, ok := ParseRetryAfter(http.Header{"Retry-After-Ms": {"NaN"}, "Retry-After": {"1"}}, now)
	require.True(t, ok)
	require.Equal(t, time.Second, got)
	// A huge but finite delay is capped instead of overflowing into a negative Duration.
	got, ok = ParseRetryAfter(http.Header{"Retry-After": {"1e15"}}, now)
	require.True(t, ok)
	require.Equal(t, maxRetryAfter, got)
}

func TestParseServerTimingQuotedSeparatorsAndBadDurations(t *testing.T) {
	t.Parallel()
	got := ParseServerTiming(`queue;desc="wait, then; go";dur=2, decode;dur=NaN, prefill;dur=-1, total;dur=Inf, gen;dur=4;dur=9`)
	require.Equal(t, map[string]float64{"queue": 2, "gen": 4}, got)
	// Two field lines joined as one list; a name given twice keeps the last.
	require.Equal(t, map[string]float64{"prefill": 5}, ParseServerTiming("prefill;dur=3, prefill;dur=5"))
}
