package report

import (
	"fmt"
	"strings"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// dispatchLines are the report's headline lines about what was not sent on
// time ("" when there is nothing to say).
func (r *Run) dispatchLines() []string { return dispatchLinesOf(r.Dispatch, r.seenReuse) }

// dispatchLinesOf are the lines of a dispatch account; reuse words a
// trace's predicted prefix reuse.
func dispatchLinesOf(d *runrecord.Dispatch, reuse func(predicted float64) string) []string {
	if d == nil {
		return nil
	}
	var out []string
	for _, s := range d.Schedules {
		line := fmt.Sprintf("schedule %s (%s): %d credits sent, %d late (worst %s), %d dropped", s.Name, s.Kind, s.Claimed,
			s.Late, fmtMS(s.MaxLagMS), s.Dropped)
		out = append(out, line)
		if s.Trace != "" {
			out = append(out, "  "+s.Trace)
		}
		if s.PrefixReuse != nil {
			out = append(out, "  "+reuse(*s.PrefixReuse))
		}
	}
	credits, iterations := d.Dropped()
	if credits > 0 || iterations > 0 {
		var parts []string
		if credits > 0 {
			parts = append(parts, fmt.Sprintf("%d schedule credits", credits))
		}
		if iterations > 0 {
			parts = append(parts, fmt.Sprintf("%.0f k6 dropped_iterations", iterations))
		}
		line := "percentiles omit " + strings.Join(parts, " and ") + ": sends the test owed and never made"
		if credits > 0 {
			line += "; the credits count as failed calls (error type dropped)"
		}
		out = append(out, line)
	}
	if f := d.K6Shortfall; f != nil {
		out = append(out, fmt.Sprintf("k6's arrival-rate executor had %.0f VUs at most; %.3g iterations/s offered × %s each "+
			"needs about %.0f (raise preAllocatedVUs/maxVUs, or use a Schedule, which sends late instead of dropping)",
			f.VUsMax, f.OfferedRate, fmtMS(1000*f.IterationSec), f.NeededVUs))
	}
	return out
}

// seenReuse sets the reuse a trace predicts beside what the servers'
// usage said was cached: the share of the prompt tokens, when any answer
// said whether it hit the cache.
func (r *Run) seenReuse(predicted float64) string {
	all := r.Category(runrecord.AllCategories)
	if all.PromptTokens == 0 || all.CacheHit+all.CacheMiss == 0 {
		return fmt.Sprintf("prefix reuse: the trace predicts %.1f%%; the server reported no cached tokens to compare "+
			"(llm_server_* from serverMetrics may)", 100*predicted)
	}
	return fmt.Sprintf("prefix reuse: the trace predicts %.1f%%; the servers' usage reported %.1f%% of prompt tokens cached",
		100*predicted, 100*float64(all.CachedTokens)/float64(all.PromptTokens))
}
