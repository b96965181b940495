package compare

import (
	"math"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// The record keeps the jobs' durations as sketches and their model time as a
// mean, not samples: no bootstrap interval can be had, so a change counts
// only when it is large both relatively and in absolute terms, and only with
// enough jobs on both sides for a p95 to be more than the slowest job.
const (
	JobsMinEffect  = 0.2 // ±20 %
	JobsMinMS      = 100 // and 100 ms: a job spans several calls
	JobsMinCompare = 20  // jobs on each side of a kind and category
)

// Jobs sets every job group of this run against the baseline's group
// of the same kind and category, the whole run's and each load stage's
// that the baseline had at the same level; groups with too few jobs on
// either side are left out.
func Jobs(cur, base *runrecord.ConversationRecord) []runrecord.JobChange {
	if cur == nil || base == nil {
		return nil
	}
	out := compareJobGroups(cur.Jobs, base.Jobs, "")
	for _, st := range cur.Stages {
		for _, bs := range base.Stages {
			if bs.ByRate == st.ByRate && runrecord.RoundLevel(bs.Concurrency) == runrecord.RoundLevel(st.Concurrency) {
				label := runrecord.FormatConc(runrecord.RoundLevel(st.Concurrency)) + " " + runrecord.LevelUnit(st.ByRate)
				out = append(out, compareJobGroups(st.Jobs, bs.Jobs, label)...)
			}
		}
	}
	return out
}

func compareJobGroups(cur, base []runrecord.JobRecord, stage string) []runrecord.JobChange {
	was := map[jobKey]runrecord.JobRecord{}
	for _, j := range base {
		was[jobKey{j.Kind, j.Category}] = j
	}
	var out []runrecord.JobChange
	for _, now := range cur {
		b, ok := was[jobKey{now.Kind, now.Category}]
		if !ok || b.Jobs < JobsMinCompare || now.Jobs < JobsMinCompare || b.Duration == nil || now.Duration == nil {
			continue
		}
		add := func(figure string, bv, cv float64) {
			out = append(out, runrecord.JobChange{Kind: now.Kind, Category: now.Category, Stage: stage, Figure: figure, Baseline: bv,
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
	if math.Abs(d) < JobsMinMS || math.Abs(d) <= JobsMinEffect*math.Abs(was) {
		return runrecord.VerdictSame
	}
	if d > 0 {
		return runrecord.VerdictWorse
	}
	return runrecord.VerdictBetter
}

func relDeltaPct(was, now float64) float64 {
	if was == 0 {
		return 0
	}
	return 100 * (now - was) / was
}

// jobKey is a job group's place in a record: its kind and category.
type jobKey struct{ Kind, Category string }
