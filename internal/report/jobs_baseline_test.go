package report

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/conversation"
	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/compare"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// jobsRun is a run with n chat conversations lasting dur each, model time
// model of it.
func jobsRun(t *testing.T, n int, dur, model time.Duration) *Run {
	t.Helper()
	c := NewConversationCollector(Options{})
	for i := range n {
		start := t0.Add(time.Duration(i) * time.Second)
		job := &record.Job{Job: *conversation.NewJob(start), Kind: record.JobConversation, Category: "chat", End: start.Add(dur)}
		job.Call(model, measure.Of(100*time.Millisecond), 10, 20, true)
		job.Turns = 2
		c.AddJob(job)
	}
	run := runOf(call(t0, "", 100))
	run.SetConversations(c.Groups())
	return run
}

// jobsRecord is the run record of jobsRun, as a later run's baseline.
func jobsRecord(t *testing.T, n int, dur, model time.Duration) *runrecord.Record {
	t.Helper()
	rec, err := runRecord(jobsRun(t, n, dur, model), nil, nil, RenderOptions{})
	require.NoError(t, err)
	return rec
}

// A job duration beyond 20 % and 100 ms of the baseline's is worse and a
// jobs_regressed finding, in the text, the HTML and the record; within
// them it is the same; a kind and category with too few jobs on either side
// is not compared.
func TestJobsAgainstTheBaseline(t *testing.T) {
	base := jobsRecord(t, 30, 5*time.Second, time.Second)
	require.NotNil(t, base.Conversations)

	same := compare.Jobs(jobsRecord(t, 30, 5500*time.Millisecond, time.Second).Conversations, base.Conversations)
	require.Len(t, same, 3)
	for _, c := range same {
		require.Equal(t, runrecord.VerdictSame, c.Verdict, jobChangeText(c))
	}
	faster := compare.Jobs(jobsRecord(t, 30, 3*time.Second, time.Second).Conversations, base.Conversations)
	require.Equal(t, runrecord.VerdictBetter, faster[0].Verdict)
	require.Empty(t, compare.Jobs(jobsRecord(t, 5, 9*time.Second, time.Second).Conversations, base.Conversations),
		"5 jobs are too few for a p95")
	require.Nil(t, compare.Jobs(nil, base.Conversations))

	cur := jobsRun(t, 30, 8*time.Second, 3*time.Second)
	text, htmlDoc, raw, err := Render(cur, nil, RenderOptions{Baseline: base})
	require.NoError(t, err)
	require.Contains(t, text, "jobs_regressed")
	require.Contains(t, text, "baseline, jobs: 3 of 3 changed")
	require.Contains(t, text, "worse   conversation · chat: duration p95")
	require.Contains(t, string(htmlDoc), `id="jobs-comparison"`)
	var rec struct {
		Comparison struct {
			Jobs []runrecord.JobChange `json:"jobs"`
		} `json:"comparison"`
		Findings []runrecord.Finding `json:"findings"`
	}
	require.NoError(t, json.Unmarshal(raw, &rec))
	require.Len(t, rec.Comparison.Jobs, 3)
	require.Equal(t, "model mean", rec.Comparison.Jobs[2].Figure)
	require.InDelta(t, 3000, rec.Comparison.Jobs[2].Current, 1)
	require.InDelta(t, 1000, rec.Comparison.Jobs[2].Baseline, 1)
	require.InDelta(t, 60, rec.Comparison.Jobs[0].DeltaPct, 3, "5 s → 8 s, within the sketch's accuracy")
	ids := []string{}
	for _, f := range rec.Findings {
		ids = append(ids, f.ID)
	}
	require.Contains(t, ids, "jobs_regressed")
}
