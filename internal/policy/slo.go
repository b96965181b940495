package policy

import (
	"time"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// Meets says whether an answered call met the SLO: each limit that is set
// holds, and a figure that could not be measured fails its limit, except TPOT,
// which a one-token answer has none of.
func Meets(slo config.SLO, r *stream.Result) bool {
	within := func(limit time.Duration, got measure.Duration) bool {
		d, ok := got.Get()
		return limit <= 0 || (ok && d <= limit)
	}
	tpot, ok := r.TPOT.Get()
	tpotOK := slo.TPOT <= 0 || !ok || tpot <= slo.TPOT
	return within(slo.TTFT, r.TTFT) && within(slo.E2E, r.E2E) && tpotOK
}
