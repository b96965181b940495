package report

import "github.com/llmstream/xk6-llmstream/internal/report/runrecord"

// mergePrecision lists each instance's precision gate. Every instance
// decided from its own calls and closed its own gate, so the merged record
// keeps their verdicts side by side instead of one interval per target: the
// parts' intervals do not combine into the whole's (the sketches behind them
// stay with the instances). The whole is "met" only when every instance's
// gate was; it closed when the last one did.
func mergePrecision(records []*runrecord.Record) *runrecord.Precision {
	var out *runrecord.Precision
	open := false // some instance's gate was still open at its end
	for _, r := range records {
		p := r.Precision
		if p == nil {
			continue
		}
		if out == nil {
			out = &runrecord.Precision{Outcome: "met", Confidence: p.Confidence, CapS: p.CapS}
		}
		out.Instances = append(out.Instances, runrecord.PrecisionInstance{Segment: p.Segment, Outcome: p.Outcome, EndedS: p.EndedS})
		if p.Outcome == "running" || p.Outcome == "cap" && out.Outcome == "met" {
			out.Outcome = p.Outcome
		}
		if p.EndedS == nil {
			open = true
		} else if out.EndedS == nil || *p.EndedS > *out.EndedS {
			v := *p.EndedS
			out.EndedS = &v
		}
	}
	if open && out != nil {
		out.EndedS = nil
	}
	return out
}
