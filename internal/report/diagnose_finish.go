package report

import (
	"fmt"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// An answer whose stream ended cleanly but whose server named no finish
// reason is complete (stream's completeness rule): llm-d's simulator and
// some gateways leave the finish out. The test stays green, so the report
// says how many such answers each client had, and a finding names the
// server's behaviour when most answers lack it: a check on finishReason
// would fail on them.

// finishOmittedShare is the share of successful answers without a finish
// reason from which the finding speaks: most of them, so a server that
// leaves it out by design, not the odd answer of a gateway.
const finishOmittedShare = 0.5

// ruleFinishOmitted: most successful answers named no finish reason.
func ruleFinishOmitted(r *Run) []runrecord.Finding {
	all := r.Category(runrecord.AllCategories)
	ok := all.Requests - all.Failures
	if all.FinishOmitted == 0 || ok == 0 {
		return nil
	}
	share := float64(all.FinishOmitted) / float64(ok)
	if share < finishOmittedShare {
		return nil
	}
	return []runrecord.Finding{{
		ID:       "finish_omitted",
		Title:    "Answers without a finish reason: the server or a gateway omits it",
		Severity: "info",
		Evidence: []string{fmt.Sprintf("%d of %d successful answers (%s) ended cleanly with no finish reason named",
			all.FinishOmitted, ok, fmtPct(share))},
		Advice: "They are complete and counted as such (result.finishSource is 'inferred' when the output reached " +
			"max_tokens, 'none' otherwise; llm_finish_omitted counts them). A check on finishReason would fail on " +
			"them; requireFinishReason: true fails them if the finish must be named.",
		Values: map[string]float64{"finish_omitted": float64(all.FinishOmitted), "share": share},
	}}
}
