package report

// The conversations' and agent jobs' figures against the baseline's: a job is
// what a user waits for (every turn, tool call and pause of it), so a slower
// job is a finding of its own (jobs_regressed), whatever the single calls did.

import (
	"bytes"
	"fmt"
	"math"
	"strings"
)

// The record keeps the jobs' durations as sketches and their model time as a
// mean, not samples: no bootstrap interval can be had, so a change counts
// only when it is large both relatively and in absolute terms, and only with
// enough jobs on both sides for a p95 to be more than the slowest job.
const (
	jobsMinEffect  = 0.2 // ±20 %
	jobsMinMS      = 100 // and 100 ms: a job spans several calls
	jobsMinCompare = 20  // jobs on each side of a kind and category
)

// JobChange is one job figure of a kind and category, this run against the
// baseline. Times in ms.
type JobChange struct {
	Kind     string  `json:"kind"`
	Category string  `json:"category"`
	Stage    string  `json:"stage,omitempty"` // the load stage ("8 VUs"), "" for the whole run's jobs
	Figure   string  `json:"figure"`          // "duration p50", "duration p95", "model mean"
	Baseline float64 `json:"baseline"`
	Current  float64 `json:"current"`
	DeltaPct float64 `json:"delta_pct"`
	Verdict  string  `json:"verdict"` // VerdictBetter, VerdictWorse, VerdictSame
}

func (c JobChange) String() string {
	return fmt.Sprintf("%s %s → %s (%+.0f%%)", c.Figure, fmtMS(c.Baseline), fmtMS(c.Current), c.DeltaPct)
}

func (c JobChange) label() string {
	if c.Stage != "" {
		return c.Kind + " · " + c.Category + " · " + c.Stage
	}
	return c.Kind + " · " + c.Category
}

// compareJobs sets every job group of this run against the baseline's group
// of the same kind and category, the whole run's and each load stage's
// that the baseline had at the same level; groups with too few jobs on
// either side are left out.
func compareJobs(cur, base *ConversationRecord) []JobChange {
	if cur == nil || base == nil {
		return nil
	}
	out := compareJobGroups(cur.Jobs, base.Jobs, "")
	for _, st := range cur.Stages {
		for _, bs := range base.Stages {
			if bs.ByRate == st.ByRate && roundLevel(bs.Concurrency) == roundLevel(st.Concurrency) {
				label := fmtConc(roundLevel(st.Concurrency)) + " " + levelUnit(st.ByRate)
				out = append(out, compareJobGroups(st.Jobs, bs.Jobs, label)...)
			}
		}
	}
	return out
}

func compareJobGroups(cur, base []JobRecord, stage string) []JobChange {
	was := map[jobKey]JobRecord{}
	for _, j := range base {
		was[jobKey{j.Kind, j.Category}] = j
	}
	var out []JobChange
	for _, now := range cur {
		b, ok := was[jobKey{now.Kind, now.Category}]
		if !ok || b.Jobs < jobsMinCompare || now.Jobs < jobsMinCompare || b.Duration == nil || now.Duration == nil {
			continue
		}
		add := func(figure string, bv, cv float64) {
			out = append(out, JobChange{Kind: now.Kind, Category: now.Category, Stage: stage, Figure: figure, Baseline: bv,
				Current: cv, DeltaPct: relDeltaPct(bv, cv), Verdict: judgeJob(bv, cv)})
		}
		add("duration p50", b.Duration.P50, now.Duration.P50)
		add("duration p95", b.Duration.P95, now.Duration.P95)
		add("model mean", b.ModelMean, now.ModelMean)
	}
	return out
}

// judgeJob says whether a job time grew (worse), shrank (better) or moved
// less than the relative effect or the floor.
func judgeJob(was, now float64) string {
	d := now - was
	if math.Abs(d) < jobsMinMS || math.Abs(d) <= jobsMinEffect*math.Abs(was) {
		return VerdictSame
	}
	if d > 0 {
		return VerdictWorse
	}
	return VerdictBetter
}

func relDeltaPct(was, now float64) float64 {
	if was == 0 {
		return 0
	}
	return 100 * (now - was) / was
}

// jobsChangeFinding is jobs_regressed when a job time got worse than the
// baseline's.
func jobsChangeFinding(changes []JobChange, findings []Finding) []Finding {
	var evidence []string
	for _, c := range changes {
		if c.Verdict == VerdictWorse {
			evidence = append(evidence, fmt.Sprintf("%s against the baseline: %s", c.label(), c))
		}
	}
	if len(evidence) == 0 {
		return findings
	}
	return append(findings, Finding{
		ID: "jobs_regressed", Title: "Conversations or agent jobs take longer than in the baseline", Severity: "warning",
		Evidence: evidence,
		Advice: "A job spans every turn, tool call and pause: compare its model time with its duration. Model time up: the " +
			"calls got slower (the baseline rows say which figure). Duration up with model time alike: more turns or steps, " +
			"longer tools or think time, or the job's script changed. " + guideLink("jobs_regressed"),
	})
}

// changedJobs is the changes that are not "no significant change".
func changedJobs(changes []JobChange) []JobChange {
	var out []JobChange
	for _, c := range changes {
		if c.Verdict != VerdictSame {
			out = append(out, c)
		}
	}
	return out
}

// writeJobChangesText lists the job figures that changed against the
// baseline, under the comparison's heading.
func writeJobChangesText(b *strings.Builder, changes []JobChange) {
	if len(changes) == 0 {
		return
	}
	changed := changedJobs(changes)
	fmt.Fprintf(b, "\n  baseline, jobs: %d of %d changed (≥%.0f%% and %d ms; from the records' sketches, so no interval; kinds, categories and stages with ≥%d jobs each side)\n",
		len(changed), len(changes), 100*jobsMinEffect, jobsMinMS, jobsMinCompare)
	for _, c := range changed {
		fmt.Fprintf(b, "    %-7s %s: %s\n", c.Verdict, c.label(), c)
	}
}

func writeJobChangesHTML(b *bytes.Buffer, changes []JobChange) {
	rows := make([]verdictRow, len(changes))
	for i, c := range changes {
		rows[i] = verdictRow{c.label(), c.Figure, c.String(), c.Verdict}
	}
	writeVerdictTableHTML(b, "jobs-comparison", "job", rows)
}
