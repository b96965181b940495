package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTracingOption(t *testing.T) {
	t.Parallel()
	c, err := ParseClient(map[string]any{"baseURL": "http://h"})
	require.NoError(t, err)
	require.Nil(t, c.Tracing, "no tracing unless asked")

	c, err = ParseClient(map[string]any{"baseURL": "http://h", "tracing": map[string]any{}})
	require.NoError(t, err)
	require.Equal(t, &Tracing{Propagator: PropagatorW3C, Sampling: 1}, c.Tracing)

	c, err = ParseClient(map[string]any{"baseURL": "http://h",
		"tracing": map[string]any{"propagator": "w3c", "sampling": 0.25}})
	require.NoError(t, err)
	require.Equal(t, &Tracing{Propagator: PropagatorW3C, Sampling: 0.25}, c.Tracing)

	c, err = ParseClient(map[string]any{"baseURL": "http://h", "tracing": map[string]any{"sampling": int64(0)}})
	require.NoError(t, err)
	require.Zero(t, c.Tracing.Sampling, "0: ids on every call, none recorded by the server")

	for _, bad := range []struct {
		tracing any
		want    string
	}{
		{map[string]any{"propagator": "b3"}, `Client options: tracing.propagator must be 'w3c' (the W3C traceparent header, the only one this client sends), got "b3"`},
		{map[string]any{"propagator": "jaeger"}, `tracing.propagator must be 'w3c'`},
		{map[string]any{"sampling": 1.5}, "tracing.sampling must be a number between 0 and 1"},
		{map[string]any{"sampling": -0.1}, "tracing.sampling must be a number between 0 and 1"},
		{map[string]any{"sampling": "all"}, "tracing.sampling"},
		{map[string]any{"propagater": "w3c"}, `did you mean "propagator"?`},
		{true, "tracing"},
	} {
		_, err := ParseClient(map[string]any{"baseURL": "http://h", "tracing": bad.tracing})
		require.ErrorContains(t, err, bad.want, bad.tracing)
	}
}
