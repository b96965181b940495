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
