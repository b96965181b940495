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

func jobChangeText(c runrecord.JobChange) string {
	return fmt.Sprintf("%s %s → %s (%+.0f%%)", c.Figure, fmtMS(c.Baseline), fmtMS(c.Current), c.DeltaPct)
}

// jobsChangeFinding is jobs_regressed when a job time got worse than the
// baseline's.
func jobsChangeFinding(changes []runrecord.JobChange, findings []runrecord.Finding) []runrecord.Finding {
	var evidence []string
	for _, c := range changes {
		if c.Verdict == runrecord.VerdictWorse {
			evidence = append(evidence, fmt.Sprintf("%s against the baseline: %s", c.Label(), jobChangeText(c)))
		}
	}
	if len(evidence) == 0 {
		return findings
	}
	return append(findings, runrecord.Finding{
		ID: "jobs_regressed", Title: "Conversations or agent jobs take longer than in the baseline", Severity: "warning",
		Evidence: evidence,
		Advice: "A job spans every turn, tool call and pause: compare its model time with its duration. Model time up: the " +
			"calls got slower (the baseline rows say which figure). Duration up with model time alike: more turns or steps, " +
			"longer tools or think time, or the job's script changed. " + guideLink("jobs_regressed"),
	})
}

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
