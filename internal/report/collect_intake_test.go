package report

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/conversation"
	"github.com/llmstream/xk6-llmstream/internal/embed"
	"github.com/llmstream/xk6-llmstream/internal/record"
)

// The intake sends each call to its sections: a chat call to the calls'
// figures and TTFT by images, a turn to the turns as well, an embed call
// to retrieval alone; a call the test's stop came during to the calls'
// figures alone (an embed call so cut to none); a job to the jobs.
func TestIntakeRoutesEachCallToItsSections(t *testing.T) {
	in := NewIntake(Options{})
	in.Add(nil)
	chat := call(t0, "", 100)
	chat.Images, chat.ImagePixels = 1, 512*512
	in.Add(chat)
	turn := call(t0, "", 120)
	turn.Turn = 2
	in.Add(turn)
	in.Add(retrievalCall(embed.OpEmbed, "batch", true, t0, 50*time.Millisecond, 4, 100))

	stopped := call(t0, "", 130)
	stopped.Turn, stopped.Images, stopped.Stopped = 3, 1, true
	in.Add(stopped)
	cut := retrievalCall(embed.OpRerank, "docs", false, t0, 0, 4, 0)
	cut.Stopped = true
	in.Add(cut)

	job := &record.Job{Job: *conversation.NewJob(t0), Kind: record.JobConversation, End: t0.Add(time.Second)}
	in.AddJob(job)

	run := in.Snapshot()
	require.EqualValues(t, 3, run.Category("all").Requests, "every chat call, the stopped one too; no embed call")
	require.Len(t, run.Retrieval, 1, "the answered embed call; the cut rerank call is in no section")
	require.Equal(t, embed.OpEmbed, run.Retrieval[0].Op)
	var images uint64
	for _, g := range run.Images {
		images += g.Calls
	}
	require.EqualValues(t, 2, images, "the answered chat calls, not the stopped one")
	require.Len(t, run.Turns, 1, "the answered turn, not the stopped one")
	require.Equal(t, 2, run.Turns[0].Turn)
	require.Len(t, run.Jobs, 1)

	empty := NewIntake(Options{}).Snapshot()
	require.Empty(t, empty.Retrieval)
	require.Nil(t, empty.Images)
	require.Empty(t, empty.Turns)
}
