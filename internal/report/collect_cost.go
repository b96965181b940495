package report

import (
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

func addCost(c *runrecord.Cost, o *Observation) {
	if !o.Priced {
		return
	}
	c.Merge(runrecord.Cost{Calls: 1, Total: o.Cost.Total(), Saved: o.Cost.Saved, Currency: o.Currency})
}
