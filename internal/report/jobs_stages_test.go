package report

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/conversation"
	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/compare"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// stagedJobsRun is a step load of 2 then 8 VUs, 10 s each, with conversations
// whose first calls went out at 2 VUs (n2 of them, dur2 each), at 8 VUs (n8,
// dur8) and one at 5 VUs, a level that is no stage.
func stagedJobsRun(t *testing.T, n2, n8 int, dur2, dur8 time.Duration) *Run {
	t.Helper()
	s := synth{seed: 1, cats: oneShortCat(), stages: plateaus(10, 2, 8)}
	run := s.collect()
	require.Len(t, run.Stages(), 2)
	c := NewConversationCollector(Options{})
	add := func(n, vus int, dur time.Duration) {
		for i := range n {
			start := t0.Add(time.Duration(i) * 100 * time.Millisecond)
			job := &record.Job{Job: *conversation.NewJob(start), Kind: record.JobConversation, Category: "chat",
				End: start.Add(dur), Load: record.Load{VUs: vus, Active: vus}}
			job.Call(dur/2, measure.Of(100*time.Millisecond), 10, 20, true)
			job.Turns = 2
			c.AddJob(job)
		}
	}
	add(n2, 2, dur2)
	add(n8, 8, dur8)
	add(1, 5, time.Second)
	run.SetConversations(c.Groups())
	return run
}

// A job is counted in the stage its first call was sent in, in the text,
// the HTML and the record; a job that started between stages is in the
// jobs table only.
func TestJobsByLoadStage(t *testing.T) {
	run := stagedJobsRun(t, 3, 5, time.Second, 4*time.Second)
	st := run.JobStages()
	require.Len(t, st, 2)
	require.Equal(t, uint64(3), st[0].Jobs[0].Jobs)
	require.Equal(t, uint64(5), st[1].Jobs[0].Jobs)
	require.Equal(t, uint64(9), run.Jobs[0].Jobs, "the whole run's table has the job of no stage too")

	text, htmlDoc, raw, err := Render(run, nil, RenderOptions{})
	require.NoError(t, err)
	require.Contains(t, text, "Jobs by load stage")
	lines := strings.Split(text, "\n")
	row := func(stage string) string {
		for _, l := range lines {
			if strings.HasPrefix(strings.TrimSpace(l), stage+" ") && strings.Contains(l, "conversation") {
				return l
			}
		}
		return ""
	}
	require.NotEmpty(t, row("2 VUs"), text)
	require.NotEmpty(t, row("8 VUs"), text)
	require.Contains(t, string(htmlDoc), `<table id="job-stages">`)
	var rec struct {
		Conversations runrecord.ConversationRecord `json:"conversations"`
	}
	require.NoError(t, json.Unmarshal(raw, &rec))
	require.Len(t, rec.Conversations.Stages, 2)
	require.InDelta(t, 2, rec.Conversations.Stages[0].Concurrency, 0.5)
	require.Equal(t, uint64(3), rec.Conversations.Stages[0].Jobs[0].Jobs)
	require.InEpsilon(t, 4000, rec.Conversations.Stages[1].Jobs[0].Duration.P50, 0.02)
}

// A run of one load level has no per-stage table: its jobs table is it.
func TestJobsOfOneStageHaveNoStageTable(t *testing.T) {
	run := jobsRun(t, 5, time.Second, time.Second)
	require.Empty(t, run.JobStages())
	text, _, _, err := Render(run, nil, RenderOptions{})
	require.NoError(t, err)
	require.NotContains(t, text, "Jobs by load stage")
}

// Two instances' stages that ran at once merge into the whole test's (VU
// levels summed, jobs added); instances whose stages do not line up merge
// none, and the merged record says why.
func TestMergeOfJobsByStage(t *testing.T) {
	rec := func(segment string, n2, n8 int) *runrecord.Record {
		r, err := runRecord(stagedJobsRun(t, n2, n8, time.Second, 4*time.Second), nil, nil, RenderOptions{})
		require.NoError(t, err)
		r.Run = testInfo(segment)
		return r
	}
	m, err := Merge(rec("0:1/2", 3, 5), rec("1/2:1", 4, 6))
	require.NoError(t, err)
	c := m.Conversations
	require.NotNil(t, c)
	require.Len(t, c.Stages, 2, c.StageNote)
	require.InDelta(t, 4, c.Stages[0].Concurrency, 1, "2 VUs on each instance")
	require.InDelta(t, 16, c.Stages[1].Concurrency, 1)
	require.Equal(t, uint64(7), c.Stages[0].Jobs[0].Jobs)
	require.Equal(t, uint64(11), c.Stages[1].Jobs[0].Jobs)
	require.Contains(t, RenderRecordText(m), "Jobs by load stage")

	other := rec("1/2:1", 4, 6)
	other.Conversations.Stages = other.Conversations.Stages[:1]
	m, err = Merge(rec("0:1/2", 3, 5), other)
	require.NoError(t, err)
	require.Empty(t, m.Conversations.Stages)
	require.Contains(t, m.Conversations.StageNote, "different load stages")
	require.Contains(t, RenderRecordText(m), "Jobs by load stage: not merged")
}

// Per-stage jobs are compared with the baseline's stage of the same level.
func TestJobsByStageAgainstTheBaseline(t *testing.T) {
	baseRun := stagedJobsRun(t, 25, 25, time.Second, 2*time.Second)
	base, err := runRecord(baseRun, nil, nil, RenderOptions{})
	require.NoError(t, err)
	cur, err := runRecord(stagedJobsRun(t, 25, 25, time.Second, 4*time.Second), nil, nil, RenderOptions{})
	require.NoError(t, err)
	var staged []runrecord.JobChange
	for _, ch := range compare.Jobs(cur.Conversations, base.Conversations) {
		if ch.Stage != "" {
			staged = append(staged, ch)
		}
	}
	require.Len(t, staged, 6, "three figures for each of two stages")
	require.Equal(t, "2 VUs", staged[0].Stage)
	require.Equal(t, runrecord.VerdictSame, staged[0].Verdict)
	require.Equal(t, "8 VUs", staged[3].Stage)
	require.Equal(t, runrecord.VerdictWorse, staged[3].Verdict, jobChangeText(staged[3]))
	require.Contains(t, staged[3].Label(), "conversation · chat · 8 VUs")
}
