package calls

// A conversation's turn: the user's pause (think time or the user-centric
// interval), waited off the event loop; then, back on it, the call's plan
// with the history as the server answered it, sent through the same path as
// client.chat (plan, attempts, fan-out); then, on the loop again, its answer
// appended to the history as it streamed.

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/grafana/sobek"
	"go.k6.io/k6/lib"

	"github.com/llmstream/xk6-llmstream/internal/conversation"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/schedule"
)

// Say is conv.say(text | item, params): the user's next turn, a Promise of
// its chat result (with result.turn), or of null once the conversation is
// over (a turn failed, or the test is stopping).
func (cv *Conversation) Say(input, params sobek.Value) (*sobek.Promise, error) {
	in, err := cv.readTurn(input, params)
	if err != nil {
		return nil, err
	}
	return cv.turn(in)
}

// turn sends one turn; an agent's steps come here too.
func (cv *Conversation) turn(in *turnInput) (*sobek.Promise, error) {
	vu := cv.c.env.VU
	st := vu.State()
	switch {
	case st == nil:
		return nil, errors.New("conversation: say() can only be called in the VU context (the default function), not in init")
	case cv.ended:
		return nil, errors.New("conversation: say() after end()")
	case cv.busy:
		return nil, errors.New("conversation: say() while the previous turn is in flight: await it first")
	}
	p, resolve, reject := vu.Runtime().NewPromise()
	if cv.over {
		_ = resolve(sobek.Null())
		return p, nil
	}
	cv.busy = true
	settle := func(v any, err error) {
		cv.busy = false
		if err != nil {
			_ = reject(err)
			return
		}
		_ = resolve(v)
	}
	wait, due := cv.pause()
	var from *schedule.Schedule // the credit's schedule, when a credit is this turn's
	if wait <= 0 {
		if cv.pace == nil {
			due, from = cv.c.env.Due.TakeFrom() // no pause: a schedule credit is this turn's as it is
		}
		cv.send(st, in, due, from, settle)
		return p, nil
	}
	cb, ctx := vu.RegisterCallback(), vu.Context()
	go func() {
		start := time.Now()
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
		end := time.Now()
		cb(func() error {
			if ctx.Err() != nil {
				cv.stop("canceled")
				settle(sobek.Null(), nil)
				return nil //nolint:nilerr // a test stopping mid-think ends the turn with null, not a JS error
			}
			if cv.job != nil { // a pause before the job's first send is not the job's
				cv.job.Think += end.Sub(start)
			}
			if cv.pace == nil {
				var credit time.Time
				credit, from = cv.c.env.Due.TakeFrom()
				due = conversation.ShiftDue(credit, start, end)
			}
			cv.send(st, in, due, from, settle)
			return nil
		})
	}()
	return p, nil
}

// pause is how long the user waits before this turn and, with user-centric
// timing, when the turn is due.
func (cv *Conversation) pause() (time.Duration, time.Time) {
	now := time.Now()
	if cv.pace != nil {
		at := cv.c.env.Pace.Next(cv.c.env.VU, *cv.pace, now)
		return at.Sub(now), at
	}
	if cv.think == nil || cv.turns == 0 {
		return 0, time.Time{}
	}
	return cv.think.Sample(cv.rng), time.Time{}
}

// send builds the turn's call on the event loop and starts it.
func (cv *Conversation) send(st *lib.State, in *turnInput, due time.Time, from *schedule.Schedule, settle func(any, error)) {
	rt := cv.c.env.VU.Runtime()
	if !in.continued {
		cv.turns++
		cv.hist.User(in.user)
	}
	body := cv.hist.Body(in.body)
	headers := http.Header{}
	cv.sess.Apply(headers, body)
	params := cv.turnParams(rt, in, headers)
	hooks := planHooks{turn: cv.turns}
	if cv.c.fallback != nil && cv.hist.Chained() {
		// The fallback server never issued the previous answer's id: it gets the whole history.
		full := cv.hist.Unchained(in.body)
		cv.sess.Apply(http.Header{}, full)
		hooks.fallbackBody = rt.ToValue(full)
	}
	if cv.sess != nil && cv.sess.RouteHeader != "" {
		hooks.responseHeaders = cv.sess.Answered // in the call's goroutine; read on the loop after it ends
	}
	plan, err := cv.c.planWith(st, rt.ToValue(body), params, hooks)
	if err != nil {
		settle(nil, fmt.Errorf("conversation: turn %d: %w", cv.turns, err))
		return
	}
	if cv.pace != nil {
		cv.c.env.Pace.Sent(time.Now())
		cv.c.env.Due.Take() // the pace, not a schedule credit, says when this turn was due
	}
	cb := cv.c.env.VU.RegisterCallback()
	cv.c.launch(st, plan, due, from, func(out *outcome, rec *record.Call) {
		cb(func() error {
			cv.answered(out, rec)
			if st.Options.Throw.Bool && !out.OK() {
				settle(nil, fmt.Errorf("llmstream: %s", out.Final().Result.Err))
				return nil
			}
			settle(rec.JS(), nil)
			return nil
		})
	})
}

// answered adds the turn's answer to the history, as it streamed, and its
// figures to the job. A failed turn ends the conversation: its history
// would have a question without an answer (a history beyond the model's
// context fails every later turn alike).
func (cv *Conversation) answered(out *outcome, rec *record.Call) {
	if out.Canceled {
		cv.stop("canceled")
		return
	}
	start := rec.Start
	if len(rec.Attempts) > 0 && !rec.Attempts[0].Result.Start.IsZero() {
		start = rec.Attempts[0].Result.Start
	}
	if start.IsZero() {
		start = time.Now()
	}
	if cv.job == nil {
		cv.job = &record.Job{Job: *conversation.NewJob(start), Kind: cv.kind, Category: cv.jobCategory(rec), Load: record.LoadOf(rec)}
	}
	end := rec.End
	if end.IsZero() {
		end = time.Now()
	}
	cv.job.Turns = cv.turns
	cv.job.Call(end.Sub(start), rec.TTFT, rec.PromptTokens(), rec.OutputTokens, rec.OK)
	cv.job.End = end
	if !rec.OK {
		reason := "failed"
		if rec.Err != nil {
			reason = string(rec.Err.Type)
		}
		cv.stop(reason)
		return
	}
	calls := make([]conversation.ToolCall, len(rec.ToolCalls))
	for i, t := range rec.ToolCalls {
		calls[i] = conversation.ToolCall{ID: t.ID, Name: t.Name, Arguments: t.Arguments}
	}
	thoughts := make([]conversation.Thought, len(rec.Thoughts))
	for i, t := range rec.Thoughts {
		thoughts[i] = conversation.Thought{Kind: t.Kind, Signature: t.Signature, Text: t.Text, Call: t.Call}
	}
	cv.hist.Answer(rec.Text, rec.Reasoning, calls, thoughts...)
	if rec.Route == routeFallback {
		cv.hist.Responded("") // an id the primary never issued: the next turn sends the whole history
	} else {
		cv.hist.Responded(rec.ResponseID)
	}
}

// jobCategory is the job's category: the conversation's, else its first
// turn's (a dataset item's).
func (cv *Conversation) jobCategory(rec *record.Call) string {
	if cv.category != "" {
		return cv.category
	}
	return rec.Category
}
