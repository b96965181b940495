package precision

import (
	"math"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// Record is the gate's result as the run record's precision section, for
// the execution segment segment ("" alone).
func (r Result) Record(segment string) *runrecord.Precision {
	out := &runrecord.Precision{Outcome: r.Outcome, Confidence: Confidence, Segment: segment,
		Targets: make([]runrecord.PrecisionTarget, len(r.Targets))}
	if r.Limit > 0 {
		out.CapS = seconds(r.Limit)
	}
	if r.Outcome != OutcomeRunning {
		out.EndedS = seconds(r.EndedAt)
	}
	for i, t := range r.Targets {
		rt := runrecord.PrecisionTarget{Target: t.Text, Figure: t.Figure, Quantile: t.Quantile, Margin: t.Margin,
			Relative: t.Relative, Met: t.Met, Calls: t.Calls, Estimate: finite(t.Estimate), Lo: finite(t.Lo), Hi: finite(t.Hi)}
		if t.Met {
			rt.MetS = seconds(t.MetAt)
		}
		out.Targets[i] = rt
	}
	return out
}

func seconds(d time.Duration) *float64 {
	v := d.Seconds()
	return &v
}

// finite is v, or nil (unknown) when the calls could not give it.
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}
