package report

import (
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// addSlowest offers a traced answer to the group's slowest calls, by the
// E2E the report's E2E row keeps (an answered call's), so the calls named
// are the ones the E2E tail is made of. An untraced call has no id to name.
func (g *Group) addSlowest(o *Observation) {
	if o.TraceID == "" {
		return
	}
	e2e, ok := record.DistE2E.Row().Kept(o)
	if !ok {
		return
	}
	c := runrecord.SlowCall{TraceID: o.TraceID, E2EMS: e2e}
	if ttft, ok := record.DistTTFT.Row().Kept(o); ok {
		c.TTFTMS = &ttft
	}
	g.Slowest.Add(c)
}
