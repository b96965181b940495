package policy

import (
	"time"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// Meets says whether an answered call met the SLO: each limit that is set
// holds, and a figure that could not be measured fails its limit, except TPOT,
// which a one-token answer has none of.
func Meets(slo config.SLO, r *stream.Result) bool {
	within := func(limit, got time.Duration) bool { return limit <= 0 || (got >= 0 && got <= limit) }
	tpotOK := slo.TPOT <= 0 || r.TPOT < 0 || r.TPOT <= slo.TPOT
	return within(slo.TTFT, r.TTFT) && within(slo.E2E, r.E2E) && tpotOK
}
