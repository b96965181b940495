package calls

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/grafana/sobek"

	"github.com/llmstream/xk6-llmstream/internal/agent"
	"github.com/llmstream/xk6-llmstream/internal/config"
)

// An agent's tools as the script gives them, and one tool round run on the
// event loop: JS functions are called there (sobek is not goroutine-safe),
// a promise a tool returns is awaited with its own then, and a canned result
// with a latency comes back through a registered callback after a timer.

// agentTools are the tools of client.agent({tools}).
type agentTools struct {
	defs []agent.Tool
	fns  map[string]sobek.Callable
}

// parseAgentTools reads {name: fn | {result, latency} | {run, description, parameters}}.
func parseAgentTools(rt *sobek.Runtime, v sobek.Value) (*agentTools, error) {
	if v == nil || sobek.IsUndefined(v) || sobek.IsNull(v) {
		return nil, errors.New("agent options: tools is required: {name: function | {result} | {run, description, parameters}}")
	}
	obj := v.ToObject(rt)
	keys := obj.Keys()
	sort.Strings(keys)
	ts := &agentTools{fns: map[string]sobek.Callable{}}
	for _, name := range keys {
		tv := obj.Get(name)
		if fn, ok := sobek.AssertFunction(tv); ok {
			ts.defs = append(ts.defs, agent.Tool{Name: name})
			ts.fns[name] = fn
			continue
		}
		t, fn, err := parseToolObject(name, tv)
		if err != nil {
			return nil, err
		}
		ts.defs = append(ts.defs, t)
		if fn != nil {
			ts.fns[name] = fn
		}
	}
	return ts, nil
}

func parseToolObject(name string, v sobek.Value) (agent.Tool, sobek.Callable, error) {
	t := agent.Tool{Name: name}
	where := "agent options: tools." + name
	o, isObj := v.(*sobek.Object)
	if _, plain := v.Export().(map[string]any); !isObj || !plain {
		return t, nil, fmt.Errorf("%s must be a function or {result} or {run}, got %v", where, v)
	}
	var fn sobek.Callable
	for _, k := range o.Keys() {
		kv := o.Get(k)
		switch k {
		case "run":
			f, ok := sobek.AssertFunction(kv)
			if !ok {
				return t, nil, fmt.Errorf("%s.run must be a function", where)
			}
			fn = f
		case "result":
			s, err := toolContent(kv)
			if err != nil {
				return t, nil, fmt.Errorf("%s.result: %w", where, err)
			}
			t.Canned = &s
		case "latency":
			d, err := config.ParseDuration(kv.Export())
			if err != nil || d < 0 {
				return t, nil, fmt.Errorf("%s.latency must be a duration like '200ms' or milliseconds, got %v", where, kv.Export())
			}
			t.Delay = d
		case "timeout":
			d, err := config.ParseDuration(kv.Export())
			if err != nil || d <= 0 {
				return t, nil, fmt.Errorf("%s.timeout must be a positive duration like '2s' or milliseconds, got %v", where, kv.Export())
			}
			t.Timeout = d
		case "description":
			t.Description = kv.String()
		case "parameters":
			p, ok := kv.Export().(map[string]any)
			if !ok {
				return t, nil, fmt.Errorf("%s.parameters must be a JSON schema object", where)
			}
			t.Parameters = p
		default:
			return t, nil, fmt.Errorf("%s: unknown option %q (run, result, latency, timeout, description, parameters)", where, k)
		}
	}
	switch {
	case fn == nil && t.Canned == nil:
		return t, nil, fmt.Errorf("%s needs run (a function) or result (a canned answer)", where)
	case fn != nil && t.Canned != nil:
		return t, nil, fmt.Errorf("%s takes run or result, not both", where)
	case fn != nil && t.Delay > 0:
		return t, nil, fmt.Errorf("%s: latency is for a canned result; a function's own time is measured", where)
	}
	return t, fn, nil
}

// toolContent is what a tool returned, as the text the model gets: a string
// as it is, anything else as JSON.
func toolContent(v sobek.Value) (string, error) {
	if v == nil || sobek.IsUndefined(v) || sobek.IsNull(v) {
		return "", nil
	}
	if s, ok := v.Export().(string); ok {
		return s, nil
	}
	b, err := json.Marshal(v.Export())
	if err != nil {
		return "", fmt.Errorf("a tool's result must be a string or JSON-serializable: %w", err)
	}
	return string(b), nil
}

// toolRound runs one answer's calls on the event loop and calls done there
// with their outcomes (in the calls' order) and the round's wall time.
type toolRound struct {
	c       *Client
	ts      *agentTools
	calls   []agent.Call
	out     []agent.Outcome
	ended   []chan struct{} // closed when the call has its outcome
	left    int
	start   time.Time
	done    func([]agent.Outcome, time.Duration)
	settled bool
}

func (c *Client) runToolRound(ctx context.Context, ts *agentTools, calls []agent.Call, done func([]agent.Outcome, time.Duration)) {
	r := &toolRound{c: c, ts: ts, calls: calls, out: make([]agent.Outcome, len(calls)), ended: make([]chan struct{}, len(calls)),
		start: time.Now(), done: done}
	for i, call := range calls {
		if call.Tool != nil {
			r.left++
			r.ended[i] = make(chan struct{})
		}
	}
	if r.left == 0 {
		r.finish()
		return
	}
	for i, call := range calls {
		switch {
		case call.Tool == nil: // a bad call: its result is already the model's error message
		case call.Tool.Canned != nil:
			r.canned(ctx, i, call)
		default:
			r.invoke(ctx, i, call)
		}
	}
}

// settle records call i's outcome, once: a timed-out call's late result is
// dropped. A synchronous tool cannot be stopped, so one past its timeout is
// judged when it returns.
func (r *toolRound) settle(i int, content string, err error, t0 time.Time) {
	select {
	case <-r.ended[i]:
		return
	default:
	}
	close(r.ended[i])
	took := time.Since(t0)
	if to := r.calls[i].Tool.Timeout; err == nil && to > 0 && took > to {
		err = &agent.TimedOut{After: to}
	}
	r.out[i] = agent.Outcome{Content: content, Err: err, Took: took}
	r.left--
	if r.left == 0 {
		r.finish()
	}
}

func (r *toolRound) finish() {
	if r.settled {
		return
	}
	r.settled = true
	r.done(r.out, time.Since(r.start))
}

// canned returns a canned result at once, or after its latency through a
// callback the event loop waits for; a latency past the tool's timeout ends
// at the timeout.
func (r *toolRound) canned(ctx context.Context, i int, call agent.Call) {
	t0 := time.Now()
	if call.Tool.Delay <= 0 {
		r.settle(i, *call.Tool.Canned, nil, t0)
		return
	}
	wait, to := call.Tool.Delay, call.Tool.Timeout
	if to > 0 && wait > to {
		wait = to
	}
	enqueue := r.c.env.VU.RegisterCallback()
	go func() {
		err := agent.Sleep(ctx, wait)
		enqueue(func() error {
			if err == nil && wait < call.Tool.Delay {
				err = &agent.TimedOut{After: to}
			}
			r.settle(i, *call.Tool.Canned, err, t0)
			return nil
		})
	}()
}

// invoke calls a JS tool with (args, call); a promise it returns is awaited,
// until the tool's timeout when it has one.
func (r *toolRound) invoke(ctx context.Context, i int, call agent.Call) {
	rt := r.c.env.VU.Runtime()
	fn := r.ts.fns[call.Name]
	info := rt.NewObject()
	_ = info.Set("id", call.ID)
	_ = info.Set("name", call.Name)
	_ = info.Set("arguments", call.Arguments)
	t0 := time.Now()
	v, err := fn(sobek.Undefined(), rt.ToValue(call.Args), info)
	if err != nil {
		r.settle(i, "", jsError(err), t0)
		return
	}
	awaitValue(rt, v, func(res sobek.Value) {
		s, err := toolContent(res)
		r.settle(i, s, err, t0)
	}, func(reason sobek.Value) {
		r.settle(i, "", rejection(reason), t0)
	})
	if to := call.Tool.Timeout; to > 0 {
		r.deadline(ctx, i, to, t0)
	}
}

// deadline settles call i as timed out if it has no outcome by to after t0.
func (r *toolRound) deadline(ctx context.Context, i int, to time.Duration, t0 time.Time) {
	select {
	case <-r.ended[i]:
		return // settled already (a synchronous tool, or a resolved value)
	default:
	}
	enqueue := r.c.env.VU.RegisterCallback()
	go func() {
		t := time.NewTimer(to - time.Since(t0))
		defer t.Stop()
		var fired bool
		select {
		case <-t.C:
			fired = true
		case <-r.ended[i]:
		case <-ctx.Done():
		}
		enqueue(func() error {
			if fired {
				r.settle(i, "", &agent.TimedOut{After: to}, t0)
			}
			return nil
		})
	}()
}

// awaitValue calls ok with v, or with what v resolves to when it is a
// thenable; the reactions run on the event loop, as promise jobs.
func awaitValue(rt *sobek.Runtime, v sobek.Value, ok, fail func(sobek.Value)) {
	if obj, isObj := v.(*sobek.Object); isObj {
		if then, callable := sobek.AssertFunction(obj.Get("then")); callable {
			onOK := rt.ToValue(func(c sobek.FunctionCall) sobek.Value { ok(c.Argument(0)); return sobek.Undefined() })
			onErr := rt.ToValue(func(c sobek.FunctionCall) sobek.Value { fail(c.Argument(0)); return sobek.Undefined() })
			if _, err := then(obj, onOK, onErr); err != nil {
				fail(rt.ToValue(err.Error()))
			}
			return
		}
	}
	ok(v)
}

// jsError is a thrown exception's message (its JS stack left out).
func jsError(err error) error {
	var ex *sobek.Exception
	if errors.As(err, &ex) {
		return errors.New(ex.Value().String())
	}
	return err
}

func rejection(reason sobek.Value) error {
	if reason == nil || sobek.IsUndefined(reason) {
		return errors.New("rejected")
	}
	return errors.New(reason.String())
}
