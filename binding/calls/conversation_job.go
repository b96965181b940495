package calls

// A conversation's end: its job figures (record.JobFigures) as one batch of
// k6 samples (samples.go), tagged with the job's kind, and as conv.end()'s
// object; and its history for the script.

import (
	"errors"

	"go.k6.io/k6/lib"
	"go.k6.io/k6/metrics"

	"github.com/llmstream/xk6-llmstream/internal/conversation"
	"github.com/llmstream/xk6-llmstream/internal/record"
)

// End is conv.end(): the conversation is over; its job figures go to k6
// once (a conversation that ended by itself sent them then) and come back.
func (cv *Conversation) End() (map[string]any, error) {
	if cv.busy {
		return nil, errors.New("conversation: end() while a turn is in flight: await say() first")
	}
	cv.ended = true
	cv.stop("")
	if cv.job == nil {
		j := &record.Job{Job: conversation.Job{InKnown: false}, Kind: cv.kind, Category: cv.category}
		return j.JS(), nil
	}
	out := cv.job.JS()
	return out, nil
}

// stop ends the conversation (reason: why it ended by itself, "" when the
// script ended it) and records its job once. A test that is stopping
// records nothing: a job it cut short is not a data point.
func (cv *Conversation) stop(reason string) {
	if !cv.over {
		cv.over, cv.endReason = true, reason
	}
	if cv.recorded || cv.job == nil {
		return
	}
	cv.recorded = true
	cv.job.EndReason = cv.endReason
	if cv.endReason == "canceled" {
		return
	}
	vu := cv.c.env.VU
	st := vu.State()
	if st == nil {
		return
	}
	if vu.Context().Err() != nil {
		return
	}
	metrics.PushIfNotDone(vu.Context(), st.Samples, jobSamples(cv.c.env.Sinks.Metrics, cv.job, cv.jobTags(st)))
	cv.c.env.Sinks.Report.Intake().AddJob(cv.job)
}

// jobTags are the job samples' tags: the VU's, the client's, the
// conversation's params tags, the job kind and its category.
func (cv *Conversation) jobTags(st *lib.State) *metrics.TagSet {
	tm := st.Tags.GetCurrentValues()
	for k, v := range cv.c.opts.Tags {
		tm.SetTag(k, v)
	}
	if t, ok := cv.params["tags"].(map[string]any); ok {
		for k, v := range t {
			if s, ok := v.(string); ok {
				tm.SetTag(k, s)
			}
		}
	}
	tm.SetTag("job", cv.job.Kind)
	tm.SetTag("protocol", cv.c.opts.Protocol.Name)
	if cv.c.opts.Model != "" {
		tm.SetTag("model", cv.c.opts.Model)
	}
	if st.Options.SystemTags == nil || st.Options.SystemTags.Has(metrics.TagName) {
		tm.SetTag("name", cv.c.name())
	}
	if cv.job.Category != "" {
		tm.SetTag("category", cv.job.Category)
	}
	return tm.Tags
}

// History is conv.history(): the messages as kept (after the cap), in the
// conversation's own terms (each protocol's shape is the request's).
func (cv *Conversation) History() []any {
	msgs := cv.hist.Messages()
	out := make([]any, len(msgs))
	for i, m := range msgs {
		calls := make([]any, len(m.ToolCalls))
		for j, c := range m.ToolCalls {
			calls[j] = map[string]any{"id": c.ID, "name": c.Name, "arguments": c.Arguments}
		}
		results := make([]any, len(m.Results))
		for j, r := range m.Results {
			results[j] = map[string]any{"id": r.ID, "name": r.Name, "content": r.Content}
		}
		thoughts := make([]any, len(m.Thoughts))
		for j, t := range m.Thoughts {
			thoughts[j] = map[string]any{"kind": t.Kind, "signature": t.Signature, "text": t.Text, "call": int64(t.Call)}
		}
		out[i] = map[string]any{"role": m.Role, "text": m.Text, "reasoning": m.Reasoning, "thoughts": thoughts,
			"toolCalls": calls, "results": results}
	}
	return out
}
