package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// SetDispatch gives the run (and each client's view of it) its dispatch
// account. The schedules' dropped credits become failed calls of the run
// (error type dropped): a credit is no client's until a call takes it, so
// they count in a client's or a category's figures only when the run had
// that one alone, and in the whole run's always.
func (r *Run) SetDispatch(d *runrecord.Dispatch) {
	r.Dispatch = d
	credits, _ := d.Dropped()
	r.droppedCredits = credits
	for _, v := range r.parts {
		v.Dispatch = d
	}
}

// droppedIn is how many dropped credits count in category cat's figures.
func (r *Run) droppedIn(cat string) uint64 {
	if r.droppedCredits == 0 {
		return 0
	}
	if cat == runrecord.AllCategories {
		return r.droppedCredits
	}
	if cats := r.Categories(); len(cats) == 1 && cats[0] == cat {
		return r.droppedCredits
	}
	return 0
}

// addDropped counts n dropped credits as failed calls.
func (g *Group) addDropped(n uint64) {
	if n == 0 {
		return
	}
	g.Requests += n
	g.Failures += n
	g.Errors[string(stream.ErrDropped)] += n
}

// The rule that marks a run's percentiles unreliable: the generator sent
// late by more than a small share of what is measured, or dropped sends.
const (
	dispatchBoundMS    = 50.0 // the P99 of send − due may reach 50 ms…
	dispatchTTFTShare  = 0.10 // …or 10 % of the TTFT P50, whichever is larger
	dispatchMinSamples = 20
)

// DispatchBoundMS is the P99 dispatch delay above which a run's percentiles
// are unreliable, for a run whose TTFT P50 is ttftP50 ms (NaN: unknown).
func DispatchBoundMS(ttftP50 float64) float64 {
	if math.IsNaN(ttftP50) {
		return dispatchBoundMS
	}
	return max(dispatchBoundMS, dispatchTTFTShare*ttftP50)
}

// ruleGeneratorBehind: the test did not offer the load it was written for.
func ruleGeneratorBehind(r *Run) []runrecord.Finding {
	all := r.Category(runrecord.AllCategories)
	var ev []string
	vals := map[string]float64{}
	if d := r.dispatchDelays(); d.Count() >= dispatchMinSamples {
		p99, bound := d.Quantile(0.99), DispatchBoundMS(q50(all.S(runrecord.MetricTTFT)))
		if p99 > bound {
			ev = append(ev, fmt.Sprintf("calls went out late: dispatch delay (send − due) P99 %s, P50 %s, above the bound of %s "+
				"(50 ms or 10%% of the TTFT P50); ttft_from_due and e2e_from_due include it", fmtMS(p99), fmtMS(q50(d)), fmtMS(bound)))
			vals["dispatch_delay_p99_ms"] = p99
			vals["dispatch_bound_ms"] = bound
		}
	}
	credits, iterations := r.Dispatch.Dropped()
	if credits > 0 {
		ev = append(ev, fmt.Sprintf("%d schedule credits were due but never sent before the test stopped: counted as failed "+
			"calls (error type dropped), absent from every percentile", credits))
		vals["dropped_credits"] = float64(credits)
	}
	if iterations > 0 {
		ev = append(ev, fmt.Sprintf("k6 dropped %.0f iterations of an arrival-rate executor (no free VU at their tick): those "+
			"requests were never sent and are absent from every percentile", iterations))
		vals["k6_dropped_iterations"] = iterations
		if f := r.Dispatch.K6Shortfall; f != nil {
			ev = append(ev, fmt.Sprintf("k6 had %.0f VUs at most; the offered %.3g iterations/s × %s per iteration needed about %.0f",
				f.VUsMax, f.OfferedRate, fmtMS(1000*f.IterationSec), f.NeededVUs))
			vals["k6_vus_max"], vals["k6_needed_vus"] = f.VUsMax, f.NeededVUs
		}
	}
	if len(ev) == 0 {
		return nil
	}
	return []runrecord.Finding{{
		ID: "generator_behind", Title: "The load generator fell behind its schedule — these percentiles omit the wait", Severity: "warning",
		Evidence: ev,
		Advice: "The test offered less load, later, than it was written for, and percentiles over the calls it sent look " +
			"better than what users arriving on schedule saw. Add VUs to the pool (enough for every call in flight: rate × " +
			"E2E, with room for bursts), give the load generator more CPU or split the test across instances; read " +
			"llm_ttft_from_due and llm_e2e_from_due for what was waited.",
		Values: vals,
	}}
}

// dispatchDelays is the dispatch delay of every call a schedule asked for:
// the chat calls' and the embed and rerank calls' (lateness is the load
// generator's, whatever the call).
func (r *Run) dispatchDelays() *sketch.Sketch {
	d := r.Category(runrecord.AllCategories).S(runrecord.MetricDispatchDelay).Clone()
	for _, g := range r.Retrieval {
		_ = d.Merge(g.DispatchDelay) // same accuracy: both are sketch.FineAlpha
	}
	return d
}

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
