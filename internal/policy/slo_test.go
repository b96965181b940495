package policy

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

func TestMeets(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	slo := config.SLO{TTFT: 100 * ms, TPOT: 10 * ms, E2E: time.Second}
	res := func(ttft, tpot, e2e measure.Duration) *stream.Result {
		return &stream.Result{TTFT: ttft, TPOT: tpot, E2E: e2e}
	}
	of, none := measure.Of, measure.Duration{}
	for _, tc := range []struct {
		name string
		r    *stream.Result
		want bool
	}{
		{"within every limit", res(of(100*ms), of(10*ms), of(time.Second)), true},
		{"ttft over", res(of(101*ms), of(5*ms), of(500*ms)), false},
		{"tpot over", res(of(50*ms), of(11*ms), of(500*ms)), false},
		{"e2e over", res(of(50*ms), of(5*ms), of(2*time.Second)), false},
		{"one token: no tpot to judge", res(of(50*ms), none, of(500*ms)), true},
		{"no ttft measured fails its limit", res(none, of(5*ms), of(500*ms)), false},
	} {
		require.Equal(t, tc.want, Meets(slo, tc.r), tc.name)
	}
	require.True(t, Meets(config.SLO{TTFT: 100 * ms}, res(of(50*ms), of(time.Hour), of(time.Hour))), "unset limits hold")
}
