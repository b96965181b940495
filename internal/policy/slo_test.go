package policy

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

func TestMeets(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	slo := config.SLO{TTFT: 100 * ms, TPOT: 10 * ms, E2E: time.Second}
	res := func(ttft, tpot, e2e time.Duration) *stream.Result {
		return &stream.Result{TTFT: ttft, TPOT: tpot, E2E: e2e}
	}
	for _, tc := range []struct {
		name string
		r    *stream.Result
		want bool
	}{
		{"within every limit", res(100*ms, 10*ms, time.Second), true},
		{"ttft over", res(101*ms, 5*ms, 500*ms), false},
		{"tpot over", res(50*ms, 11*ms, 500*ms), false},
		{"e2e over", res(50*ms, 5*ms, 2*time.Second), false},
		{"one token: no tpot to judge", res(50*ms, stream.Absent, 500*ms), true},
		{"no ttft measured fails its limit", res(stream.Absent, 5*ms, 500*ms), false},
	} {
		require.Equal(t, tc.want, Meets(slo, tc.r), tc.name)
	}
	require.True(t, Meets(config.SLO{TTFT: 100 * ms}, res(50*ms, time.Hour, time.Hour)), "unset limits hold")
}
