package calls

// client.agent(options): an agent whose run(task) is one job, a live
// conversation (kind 'agent') whose steps the loop of internal/agent
// decides: each model answer's tool calls run on the event loop
// (agent_tools.go), their results go back in the protocol's history, and the
// model is asked again, until it answers without calls, a tool fails or the
// step limit is reached. The job's figures are the conversation's
// (llm_job_*, job=agent) with the tools' time and the steps filled in.

import (
	"errors"
	"fmt"
	"time"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/common"

	"github.com/llmstream/xk6-llmstream/internal/agent"
	"github.com/llmstream/xk6-llmstream/internal/conversation"
	"github.com/llmstream/xk6-llmstream/internal/record"
)

// agentOnlyOptions are client.agent's own options; the rest are a
// conversation's.
var agentOnlyOptions = []string{"tools", "maxSteps", "badCalls"} //nolint:gochecknoglobals // read-only table

// Agent is the JS agent: its tools, its loop's options and the
// conversation options each job starts from.
type Agent struct {
	c        *Client
	tools    *agentTools
	opts     agent.Options
	convOpts map[string]any
	decl     any             // the tools as the protocol's request declares them
	warned   map[string]bool // finding kinds already logged (once per agent)
}

// Agent is client.agent(options).
func (c *Client) Agent(v sobek.Value) (*Agent, error) {
	rt := c.env.VU.Runtime()
	if common.IsNullish(v) {
		return nil, errors.New("client.agent(options): options are required, at least {tools: {...}}")
	}
	obj := v.ToObject(rt)
	ts, err := parseAgentTools(rt, obj.Get("tools"))
	if err != nil {
		return nil, err
	}
	o := agent.Options{Tools: ts.defs}
	if ms := obj.Get("maxSteps"); !common.IsNullish(ms) {
		n, ok := ms.Export().(int64)
		if !ok || n < 1 {
			return nil, fmt.Errorf("agent options: maxSteps must be a whole number of 1 or more, got %v", ms.Export())
		}
		o.MaxSteps = int(n)
	}
	if bc := obj.Get("badCalls"); !common.IsNullish(bc) {
		o.BadCalls = bc.String()
	}
	if _, err := agent.New(o); err != nil { // checked now, so a typo fails in init
		return nil, fmt.Errorf("agent options: %w", err)
	}
	decl, ok := agent.Declarations(c.opts.Protocol.Name, ts.defs)
	if !ok {
		return nil, fmt.Errorf("client.agent: protocol %s has no tool calls (openai-chat, openai-responses, anthropic, gemini, ollama have)", c.opts.Protocol.Name)
	}
	conv := map[string]any{}
	for _, k := range []string{"think", "pace"} {
		if !common.IsNullish(obj.Get(k)) {
			return nil, fmt.Errorf("agent options: %s: an agent's steps follow each other without a user's pause (time the jobs with the scenario or a Schedule)", k)
		}
	}
	for _, k := range obj.Keys() {
		if !contains(agentOnlyOptions, k) {
			conv[k] = obj.Get(k).Export()
		}
	}
	a := &Agent{c: c, tools: ts, opts: o, convOpts: conv, decl: decl, warned: map[string]bool{}}
	if _, err := a.conversation(); err != nil { // the conversation options too
		return nil, err
	}
	return a, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// conversation starts a job's conversation: the agent's options, with the
// tools declared in the body of every step.
func (a *Agent) conversation() (*Conversation, error) {
	o := make(map[string]any, len(a.convOpts)+1)
	for k, v := range a.convOpts {
		o[k] = v
	}
	body := map[string]any{}
	if b, ok := o["body"].(map[string]any); ok {
		for k, v := range b {
			body[k] = v
		}
	} else if o["body"] != nil {
		return nil, errors.New("agent options: body must be an object (body fields sent on every step)")
	}
	if _, set := body["tools"]; set {
		return nil, errors.New("agent options: body.tools is declared from tools: give each tool's description and parameters there")
	}
	body["tools"] = a.decl
	o["body"] = body
	cv, err := a.c.newConversation(a.c.env.VU.Runtime().ToValue(o))
	if err != nil {
		return nil, fmt.Errorf("agent options: %w", err)
	}
	cv.kind = record.JobAgent
	return cv, nil
}

// Run is agent.run(task): one job, a Promise of its figures with the
// answer's text, the findings and, when it failed, the error.
func (a *Agent) Run(task sobek.Value) (*sobek.Promise, error) {
	vu := a.c.env.VU
	if vu.State() == nil {
		return nil, errors.New("agent.run() can only be called in the VU context (the default function), not in init")
	}
	cv, err := a.conversation()
	if err != nil {
		return nil, err
	}
	first, err := cv.readTurn(task, sobek.Undefined())
	if err != nil {
		return nil, fmt.Errorf("agent.run(task): %w", err)
	}
	eng, err := agent.New(a.opts)
	if err != nil {
		return nil, err
	}
	p, resolve, reject := vu.Runtime().NewPromise()
	j := &agentJob{a: a, cv: cv, eng: eng, resolve: func(v any) { _ = resolve(v) }, reject: func(err error) { _ = reject(err) }}
	j.step(first)
	return p, nil
}

// agentJob is one run: its conversation, its loop and its promise.
type agentJob struct {
	a       *Agent
	cv      *Conversation
	eng     *agent.Agent
	resolve func(any)
	reject  func(error)
	err     *agent.Error
	calls   []any // each tool call run: {step, id, name, time, ok}
}

// step sends one model call and handles its answer on the event loop.
func (j *agentJob) step(in *turnInput) {
	pr, err := j.cv.turn(in)
	if err != nil {
		j.reject(err)
		return
	}
	rt := j.a.c.env.VU.Runtime()
	awaitValue(rt, rt.ToValue(pr), func(sobek.Value) { j.answered() }, func(reason sobek.Value) {
		j.reject(rejection(reason)) // chat's throw option: the failed call rejects
	})
}

// answered decides what the model's answer asks for.
func (j *agentJob) answered() {
	if j.cv.over { // the call failed (its job figures are recorded) or the test is stopping
		j.finish()
		return
	}
	calls, err := j.eng.Answered(lastCalls(j.cv.hist))
	if j.cv.job != nil { // before anything records the job
		j.cv.job.BadToolCalls = len(j.eng.Findings())
	}
	if err != nil {
		j.fail(err)
		return
	}
	if len(calls) == 0 {
		j.finish()
		return
	}
	ctx := j.a.c.env.VU.Context()
	j.a.c.runToolRound(ctx, j.a.tools, calls, func(out []agent.Outcome, took time.Duration) {
		j.cv.job.Tool += took
		j.cv.job.End = time.Now()
		j.noteCalls(calls, out)
		if ctx.Err() != nil {
			j.cv.stop("canceled")
			j.finish()
			return
		}
		rs, err := j.eng.Finished(calls, out)
		if err != nil {
			j.fail(err)
			return
		}
		j.cv.hist.Results(rs)
		next := &turnInput{continued: true}
		next.body = j.cv.turnBody(next)
		j.step(next)
	})
}

// noteCalls keeps each run call's own time for the job's result (a bad
// call ran nothing and has none).
func (j *agentJob) noteCalls(calls []agent.Call, out []agent.Outcome) {
	for i, c := range calls {
		if c.Tool == nil || i >= len(out) {
			continue
		}
		j.calls = append(j.calls, map[string]any{
			"step": int64(j.eng.Steps()), "id": c.ID, "name": c.Name,
			"time": float64(out[i].Took) / float64(time.Millisecond), "ok": out[i].Err == nil,
		})
	}
}

// lastCalls are the tool calls of the history's last answer.
func lastCalls(h *conversation.History) []conversation.ToolCall {
	msgs := h.Messages()
	if n := len(msgs); n > 0 && msgs[n-1].Role == conversation.RoleAssistant {
		return msgs[n-1].ToolCalls
	}
	return nil
}

// fail ends the job with the loop's classified error.
func (j *agentJob) fail(err error) {
	var ae *agent.Error
	if !errors.As(err, &ae) {
		ae = &agent.Error{Type: agent.ErrTool, Message: err.Error()}
	}
	j.err = ae
	if j.cv.job != nil {
		j.cv.job.Failed = true
	}
	j.cv.stop(ae.Type)
	j.finish()
}

// finish ends the conversation and resolves the run with its job object.
func (j *agentJob) finish() {
	out, err := j.cv.End()
	if err != nil {
		j.reject(err)
		return
	}
	failed := j.cv.job == nil || j.cv.job.Failed || j.err != nil
	out["text"] = nil
	if msgs := j.cv.hist.Messages(); len(msgs) > 0 && !failed {
		if m := msgs[len(msgs)-1]; m.Role == conversation.RoleAssistant && len(m.ToolCalls) == 0 {
			out["text"] = m.Text
		}
	}
	out["rounds"] = int64(j.eng.Rounds())
	out["toolCalls"] = append([]any{}, j.calls...)
	findings := make([]any, 0, len(j.eng.Findings()))
	for _, f := range j.eng.Findings() {
		j.a.warnOnce(f)
		findings = append(findings, map[string]any{"kind": f.Kind, "step": int64(f.Step), "tool": f.Tool, "arguments": f.Arguments, "message": f.Message})
	}
	out["findings"] = findings
	out["error"] = nil
	if r := j.cv.endReason; j.err == nil && failed && r != "" {
		out["error"] = map[string]any{"type": r, "message": "the model call of step " + fmt.Sprint(j.eng.Steps()+1) + " failed (" + r + ")", "tool": nil}
	}
	if j.err != nil {
		e := map[string]any{"type": j.err.Type, "message": j.err.Message, "tool": nil}
		if j.err.Tool != "" {
			e["tool"] = j.err.Tool
		}
		out["error"] = e
	}
	j.resolve(out)
}

// warnOnce logs the first finding of each kind: a model that calls tools it
// was not given is worth knowing about while the test runs, and once is
// enough (every job's findings are in its result).
func (a *Agent) warnOnce(f agent.Finding) {
	if a.warned[f.Kind] {
		return
	}
	a.warned[f.Kind] = true
	if st := a.c.env.VU.State(); st != nil {
		st.Logger.Warnf("llmstream agent: the model made a bad tool call (%s, step %d): %s; the model was told, and job.findings lists every one", f.Kind, f.Step, f.Message)
	}
}
