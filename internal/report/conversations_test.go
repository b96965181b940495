package report

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/conversation"
	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// Answered turns by number and cache state; jobs by kind and category; the
// section in the text, the HTML and the run record; calls that are not
// turns and failed turns are not in it.
func TestConversationSection(t *testing.T) {
	c := NewConversationCollector(Options{})
	turn := func(n int, cache stream.CacheState, ttft time.Duration) *Observation {
		return &Observation{Result: &stream.Result{OK: true, TTFT: measure.Of(ttft), Cache: cache}, Origin: record.Origin{Turn: n}}
	}
	c.Add(turn(1, stream.CacheMiss, 100*time.Millisecond))
	c.Add(turn(2, stream.CacheHit, 110*time.Millisecond))
	c.Add(turn(2, stream.CacheMiss, 400*time.Millisecond))
	c.Add(turn(12, stream.CacheHit, 120*time.Millisecond))
	c.Add(turn(0, stream.CacheHit, time.Second)) // not a conversation's
	c.Add(&Observation{Result: &stream.Result{OK: false}, Origin: record.Origin{Turn: 3}})
	start := t0
	job := &record.Job{Job: *conversation.NewJob(start), Kind: record.JobConversation, Category: "chat", End: start.Add(5 * time.Second)}
	job.Call(time.Second, measure.Of(100*time.Millisecond), 10, 20, true)
	job.Think, job.Turns = 4*time.Second, 2
	c.AddJob(job)
	c.AddJob(&record.Job{Kind: record.JobConversation}) // never started: no figures
	g := c.Groups()
	turns, jobs := g.Turns, g.Jobs
	require.Len(t, turns, 4)
	require.Equal(t, []int{1, 2, 2, 10}, []int{turns[0].Turn, turns[1].Turn, turns[2].Turn, turns[3].Turn})
	require.Equal(t, "hit", turns[1].Cache)
	require.Len(t, jobs, 1)
	require.Equal(t, uint64(1), jobs[0].Jobs)

	run := runOf(call(t0, "", 100))
	run.SetConversations(g)
	text, htmlDoc, raw, err := Render(run, nil, RenderOptions{})
	require.NoError(t, err)
	require.Contains(t, text, "TTFT by conversation turn")
	require.Contains(t, text, "10+")
	require.Contains(t, text, "Conversations and agent jobs")
	require.Contains(t, string(htmlDoc), `<table id="turns">`)
	require.Contains(t, string(htmlDoc), `<table id="jobs">`)
	var rec struct {
		Conversations struct {
			Turns []runrecord.TurnRecord `json:"turns"`
			Jobs  []runrecord.JobRecord  `json:"jobs"`
		} `json:"conversations"`
	}
	require.NoError(t, json.Unmarshal(raw, &rec))
	require.Len(t, rec.Conversations.Turns, 4)
	require.Len(t, rec.Conversations.Jobs, 1)
	j := rec.Conversations.Jobs[0]
	require.InEpsilon(t, 5000, j.Duration.P50, 0.02)
	require.InDelta(t, 1000, j.ModelMean, 0.01)
	require.InDelta(t, 4000, j.ThinkMean, 0.01)

	empty := runOf(call(t0, "", 100))
	text, _, raw, err = Render(empty, nil, RenderOptions{})
	require.NoError(t, err)
	require.NotContains(t, text, "conversation turn")
	require.NotContains(t, string(raw), `"conversations"`)
}
