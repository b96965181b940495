package report

// The conversations' and agent jobs' figures against the baseline's: a job is
// what a user waits for (every turn, tool call and pause of it), so a slower
// job is a finding of its own (jobs_regressed), whatever the single calls did.

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/llmstream/xk6-llmstream/internal/report/compare"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// changedJobs is the changes that are not "no significant change".
func changedJobs(changes []runrecord.JobChange) []runrecord.JobChange {
	var out []runrecord.JobChange
	for _, c := range changes {
		if c.Verdict != runrecord.VerdictSame {
			out = append(out, c)
		}
	}
	return out
}

// writeJobChangesText lists the job figures that changed against the
// baseline, under the comparison's heading.
func writeJobChangesText(b *strings.Builder, changes []runrecord.JobChange) {
	if len(changes) == 0 {
		return
	}
	changed := changedJobs(changes)
	fmt.Fprintf(b, "\n  baseline, jobs: %d of %d changed (≥%.0f%% and %d ms; from the records' sketches, so no interval; kinds, categories and stages with ≥%d jobs each side)\n",
		len(changed), len(changes), 100*compare.JobsMinEffect, compare.JobsMinMS, compare.JobsMinCompare)
	for _, c := range changed {
		fmt.Fprintf(b, "    %-7s %s: %s\n", c.Verdict, c.Label(), jobChangeText(c))
	}
}

func writeJobChangesHTML(b *bytes.Buffer, changes []runrecord.JobChange) {
	rows := make([]verdictRow, len(changes))
	for i, c := range changes {
		rows[i] = verdictRow{c.Label(), c.Figure, jobChangeText(c), c.Verdict}
	}
	writeVerdictTableHTML(b, "jobs-comparison", "job", rows)
}
