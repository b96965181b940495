package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func smClient(v any) map[string]any {
	return map[string]any{"baseURL": "http://127.0.0.1:1/v1", "serverMetrics": v}
}

// The first form, one object, still reads as one endpoint; its source is
// its host:port unless given.
func TestServerMetricsOneObject(t *testing.T) {
	t.Parallel()
	c, err := ParseClient(smClient(map[string]any{"url": "http://user:pw@vllm:8000/metrics", "interval": "2s"}))
	require.NoError(t, err)
	require.Len(t, c.ServerMetrics, 1)
	require.Equal(t, "vllm:8000", c.ServerMetrics[0].Source, "the host, never the user info")
	require.Equal(t, 2*time.Second, c.ServerMetrics[0].Interval)
}

// Several endpoints, each with its own interval and source.
func TestServerMetricsList(t *testing.T) {
	t.Parallel()
	c, err := ParseClient(smClient([]any{
		map[string]any{"url": "http://vllm:8000/metrics", "source": "engine", "interval": "1s"},
		map[string]any{"url": "http://gpu-node:9400/metrics", "source": "dcgm", "interval": "250ms"},
		map[string]any{"url": "http://vllm-2:8000/metrics"},
	}))
	require.NoError(t, err)
	require.Len(t, c.ServerMetrics, 3)
	require.Equal(t, "dcgm", c.ServerMetrics[1].Source)
	require.Equal(t, 250*time.Millisecond, c.ServerMetrics[1].Interval)
	require.Equal(t, "vllm-2:8000", c.ServerMetrics[2].Source)

	c, err = ParseClient(smClient([]any{
		map[string]any{"url": "http://gw/engine/metrics", "models": "http://gw/v1/models"},
		map[string]any{"url": "http://gpu-node:9400/metrics", "models": "off"},
	}))
	require.NoError(t, err)
	require.Equal(t, "http://gw/v1/models", c.ServerMetrics[0].Models)
	require.Equal(t, "off", c.ServerMetrics[1].Models)
}

func TestServerMetricsListRefusals(t *testing.T) {
	t.Parallel()
	for want, v := range map[string]any{
		"Client options: serverMetrics must name at least one endpoint": []any{},
		"Client options: serverMetrics[1].url names the same endpoint as [0]": []any{
			map[string]any{"url": "http://a/metrics"}, map[string]any{"url": "http://a/metrics", "source": "b"},
		},
		`Client options: serverMetrics[1].source "x" is [0]'s too`: []any{
			map[string]any{"url": "http://a/metrics", "source": "x"}, map[string]any{"url": "http://b/metrics", "source": "x"},
		},
		"Client options: serverMetrics[0].source must be 1 to 64 letters": []any{map[string]any{"url": "http://a/metrics", "source": "a b"}},
		"Client options: serverMetrics[1].interval must be at least 50ms": []any{
			map[string]any{"url": "http://a/metrics"}, map[string]any{"url": "http://b/metrics", "interval": "1ms"},
		},
		"Client options: serverMetrics[0].models must be 'off' or http(s)://host[:port]/v1/models": []any{
			map[string]any{"url": "http://a/metrics", "models": "vllm:8000/v1/models"},
		},
		`Client options: serverMetrics must be an object like {url: 'http://vllm:8000/metrics', interval: '1s'} or a list of them`: "http://a/metrics",
	} {
		_, err := ParseClient(smClient(v))
		require.ErrorContains(t, err, want)
	}
}
