package policy

import (
	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/measure"
)

// MeetsDuration judges a non-streamed call (embeddings, rerank) by the SLO:
// its e2e limit holds its whole duration. TTFT and TPOT limits are about
// streams, which it is not, so a client whose SLO sets no e2e limit leaves
// it unjudged (judged false) rather than failing it on a figure it cannot have.
func MeetsDuration(slo config.SLO, d measure.Duration) (ok, judged bool) {
	if slo.E2E <= 0 {
		return false, false
	}
	v, measured := d.Get()
	return measured && v <= slo.E2E, true
}
