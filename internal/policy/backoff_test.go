package policy

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

func TestBackoffDoublesUpToItsMax(t *testing.T) {
	t.Parallel()
	pol := config.Retry{Backoff: config.Backoff{Base: 100 * time.Millisecond, Max: 300 * time.Millisecond}}
	res := &stream.Result{RetryAfter: measure.Duration{}}
	require.Equal(t, 100*time.Millisecond, Backoff(pol, 1, res))
	require.Equal(t, 200*time.Millisecond, Backoff(pol, 2, res))
	require.Equal(t, 300*time.Millisecond, Backoff(pol, 3, res), "capped at max")
}

func TestBackoffJitterStaysWithinItsShare(t *testing.T) {
	t.Parallel()
	pol := config.Retry{Backoff: config.Backoff{Base: 100 * time.Millisecond, Jitter: 0.2}}
	res := &stream.Result{RetryAfter: measure.Duration{}}
	seen := map[time.Duration]bool{}
	for range 200 {
		d := Backoff(pol, 1, res)
		require.GreaterOrEqual(t, d, 80*time.Millisecond)
		require.LessOrEqual(t, d, 120*time.Millisecond)
		seen[d] = true
	}
	require.Greater(t, len(seen), 10, "jitter spreads the waits")
}

// The server's Retry-After wins when the policy respects it, even past max
// and even when it is zero; otherwise it is ignored.
func TestBackoffTakesRetryAfter(t *testing.T) {
	t.Parallel()
	pol := config.Retry{Backoff: config.Backoff{Base: 100 * time.Millisecond, Max: time.Second}, RespectRetryAfter: true}
	require.Equal(t, 5*time.Second, Backoff(pol, 1, &stream.Result{RetryAfter: measure.Of(5 * time.Second)}))
	require.Equal(t, time.Duration(0), Backoff(pol, 2, &stream.Result{RetryAfter: measure.Of(0)}))
	require.Equal(t, 200*time.Millisecond, Backoff(pol, 2, &stream.Result{RetryAfter: measure.Duration{}}))
	pol.RespectRetryAfter = false
	require.Equal(t, 100*time.Millisecond, Backoff(pol, 1, &stream.Result{RetryAfter: measure.Of(5 * time.Second)}))
}
