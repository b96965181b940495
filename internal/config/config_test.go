package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/stream"
)

func TestParseDuration(t *testing.T) {
	t.Parallel()
	for in, want := range map[any]time.Duration{
		int64(250): 250 * time.Millisecond, 1.5: 1500 * time.Microsecond, "3s": 3 * time.Second,
		" 1m30s ": 90 * time.Second, "0": 0,
	} {
		got, err := ParseDuration(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []any{"-1s", "soon", int64(-5), true, map[string]any{}} {
		_, err := ParseDuration(bad)
		require.Error(t, err, bad)
	}
}

func TestClientDefaultsAndOverrides(t *testing.T) {
	t.Parallel()
	c, err := ParseClient(map[string]any{"baseURL": "http://h:1/v1/"})
	require.NoError(t, err)
	require.Equal(t, "http://h:1/v1", c.BaseURL)
	require.Equal(t, "openai-chat", c.Protocol.Name)
	require.Equal(t, DefaultTotalTimeout, c.Timeouts.Total)
	require.Equal(t, GapsPerEvent, c.GapSamples)
	require.Equal(t, 1, c.Retry.Attempts)

	c, err = ParseClient(map[string]any{
		"baseURL": "https://h", "timeouts": map[string]any{"idle": "2s", "firstToken": int64(500)},
		"retry": map[string]any{"attempts": int64(4), "on": []any{"http_429"}, "idempotencyKey": "X-Key",
			"backoff": map[string]any{"base": "10ms", "max": "1s", "jitter": 0.5}},
		"slo": map[string]any{"ttft": "800ms"}, "gapSamples": "request",
	})
	require.NoError(t, err)
	require.Equal(t, 2*time.Second, c.Timeouts.Idle)
	require.Equal(t, 500*time.Millisecond, c.Timeouts.FirstToken)
	require.Equal(t, DefaultConnectTimeout, c.Timeouts.Connect)
	require.Equal(t, 4, c.Retry.Attempts)
	require.Equal(t, map[stream.ErrorType]bool{stream.ErrHTTP429: true}, c.Retry.On)
	require.Equal(t, "X-Key", c.Retry.IdempotencyKey)
	require.Equal(t, Backoff{Base: 10 * time.Millisecond, Max: time.Second, Jitter: 0.5}, c.Retry.Backoff)
	require.True(t, c.SLO.Set())
	require.Equal(t, GapsPerRequest, c.GapSamples)
}

func TestCallParamsAndReservedTags(t *testing.T) {
	t.Parallel()
	c, err := ParseClient(map[string]any{"baseURL": "http://h", "gaps": true})
	require.NoError(t, err)
	call, err := ParseCall(map[string]any{"tags": map[string]any{"category": "short", "turn": int64(2)},
		"timeouts": map[string]any{"total": "5s"}}, c)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"category": "short", "turn": "2"}, call.Tags)
	require.Equal(t, 5*time.Second, call.Timeouts.Total)
	require.Equal(t, c.Timeouts.Idle, call.Timeouts.Idle)
	require.True(t, call.Gaps)
	_, err = ParseCall(map[string]any{"tags": map[string]any{"error_type": "x"}}, c)
	require.ErrorContains(t, err, "set by the client itself")
	_, err = ParseCall(map[string]any{"bogus": 1}, c)
	require.ErrorContains(t, err, "unknown option(s) bogus")
}
