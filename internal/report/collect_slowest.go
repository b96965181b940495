package report

import "github.com/llmstream/xk6-llmstream/internal/report/runrecord"

// slowCallOf is a traced answer as a group's slowest calls rank it, by the
// E2E the report's E2E row keeps (an answered call's), so the calls named
// are the ones the E2E tail is made of. An untraced call has no id to name.
func slowCallOf(o *Observation) (runrecord.SlowCall, bool) {
	if o.TraceID == "" {
		return runrecord.SlowCall{}, false
	}
	e2e, ok := rowE2E.Kept(o)
	if !ok {
		return runrecord.SlowCall{}, false
	}
	c := runrecord.SlowCall{TraceID: o.TraceID, E2EMS: e2e}
	if ttft, ok := rowTTFT.Kept(o); ok {
		c.TTFTMS = &ttft
	}
	return c, true
}
