package report

import (
	"fmt"
	"math"

	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
)

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
		p99, bound := d.Quantile(0.99), DispatchBoundMS(q50(all.S(record.DistTTFT)))
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
	d := r.Category(runrecord.AllCategories).S(record.DistDispatchDelay).Clone()
	for _, g := range r.Retrieval {
		_ = d.Merge(g.DispatchDelay) // same accuracy: both are sketch.FineAlpha
	}
	return d
}
