package agent

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/conversation"
)

// Func runs a tool in Go.
type Func func(ctx context.Context, args map[string]any) (string, error)

// Model is one model call: the last round's results in (nil on the first
// step), the answer's tool calls out.
type Model func(ctx context.Context, results []conversation.ToolResult) ([]conversation.ToolCall, error)

// Report is a finished job's loop figures.
type Report struct {
	Steps, Rounds, Calls int
	// ToolTime is the rounds' wall time: parallel calls overlap, so it is
	// the time the job waited for its tools, not the sum of their own times.
	ToolTime time.Duration
	Findings []Finding
}

// Run drives a job for Go callers: funcs run a's tools by name (a tool with
// a canned result needs none); the calls of one answer run in parallel.
func Run(ctx context.Context, a *Agent, model Model, funcs map[string]Func) (Report, error) {
	var rep Report
	var results []conversation.ToolResult
	for {
		answer, err := model(ctx, results)
		if err != nil {
			return a.report(rep), err
		}
		calls, err := a.Answered(answer)
		if err != nil || len(calls) == 0 {
			rep.Steps = a.Steps()
			return a.report(rep), err
		}
		start := time.Now()
		outcomes := runParallel(ctx, calls, funcs)
		rep.ToolTime += time.Since(start)
		rep.Calls += len(calls)
		if results, err = a.Finished(calls, outcomes); err != nil {
			return a.report(rep), err
		}
	}
}

func (a *Agent) report(r Report) Report {
	r.Steps, r.Rounds, r.Findings = a.Steps(), a.Rounds(), a.Findings()
	return r
}

func runParallel(ctx context.Context, calls []Call, funcs map[string]Func) []Outcome {
	out := make([]Outcome, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		if c.Tool == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			t0 := time.Now()
			out[i].Content, out[i].Err = runOne(ctx, c, funcs[c.Name])
			out[i].Took = time.Since(t0)
		}()
	}
	wg.Wait()
	return out
}

// runOne runs one call; with a Timeout, a tool past it is TimedOut: its
// context ends then, and one that ignores it is judged when it returns.
func runOne(ctx context.Context, c Call, f Func) (string, error) {
	to := c.Tool.Timeout
	if to > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, to, &TimedOut{After: to})
		defer cancel()
	}
	t0 := time.Now()
	var (
		out string
		err error
	)
	switch {
	case c.Tool.Canned != nil:
		out, err = *c.Tool.Canned, Sleep(ctx, c.Tool.Delay)
	case f == nil:
		return "", errors.New("no function for tool " + c.Name)
	default:
		out, err = f(ctx, c.Args)
	}
	if cause := context.Cause(ctx); cause != nil && err != nil {
		return "", cause // its timeout (or the job's end), not what it made of it
	}
	if to > 0 && time.Since(t0) > to {
		return "", &TimedOut{After: to}
	}
	return out, err
}

// Sleep waits d unless ctx ends first.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
