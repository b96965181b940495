// Package agent is the tool-call loop of an agent job: model → tool calls →
// tool results → model, until the model answers without calls or the step
// limit is reached. It decides, it does not call: the caller makes the model
// calls and runs the tools (a JS binding must run script functions on its
// event loop), and hands back what came of them. Run drives the loop for Go
// callers. Nothing here knows about k6.
package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/conversation"
	"github.com/llmstream/xk6-llmstream/internal/jsondepth"
)

// Error types of a failed agent job (the job's end reason).
const (
	ErrTool      = "tool_error"    // a tool threw or rejected
	ErrTimeout   = "tool_timeout"  // a tool ran past its Timeout
	ErrStepLimit = "step_limit"    // the model still asked for tools at the last step
	ErrBadCall   = "bad_tool_call" // an unknown tool or malformed arguments, with BadCalls "fail"
)

// Finding kinds: a call the model got wrong.
const (
	FindingUnknownTool = "unknown_tool"
	FindingMalformed   = "malformed_arguments"
)

// Bad-call policies.
const (
	BadCallsReport = "report" // recorded as a finding; the model is told what was wrong and goes on
	BadCallsFail   = "fail"   // the job fails (ErrBadCall)
)

// DefaultMaxSteps bounds the model calls of a job when the script sets none.
const DefaultMaxSteps = 10

// Error is a failed job's classified error.
type Error struct {
	Type    string
	Message string
	Tool    string // the tool that threw (ErrTool), else ""
}

func (e *Error) Error() string { return e.Type + ": " + e.Message }

// Tool is a tool the model may call: run by the caller (Func, or the
// binding's own callback) or a canned result returned after Delay.
type Tool struct {
	Name        string
	Description string
	Parameters  map[string]any // JSON schema of the arguments (nil: any object)
	Canned      *string
	Delay       time.Duration
	// Timeout bounds the tool's own time (0: none): past it the job fails
	// with ErrTimeout, as an agent framework's tool timeout fails the run.
	Timeout time.Duration
}

// TimedOut is the outcome error of a tool that ran past its Timeout.
type TimedOut struct{ After time.Duration }

func (e *TimedOut) Error() string { return "ran past its timeout of " + e.After.String() }

// Options shape an agent job.
type Options struct {
	Tools    []Tool
	MaxSteps int    // model calls at most (0: DefaultMaxSteps)
	BadCalls string // BadCallsReport (default) or BadCallsFail
}

// Finding is a call the model got wrong; the job goes on (BadCallsReport).
type Finding struct {
	Kind      string
	Step      int // the model call (1-based) that made it
	Tool      string
	Arguments string
	Message   string
}

// Call is one tool call of an answer, ready to run: Tool is nil when the call
// is bad, and Result is then what the model is told.
type Call struct {
	conversation.ToolCall
	Tool   *Tool
	Args   map[string]any
	Result string
}

// Outcome is what came of running one call.
type Outcome struct {
	Content string
	Err     error
	Took    time.Duration
}

// Agent is one job's loop state.
type Agent struct {
	o        Options
	tools    map[string]*Tool
	steps    int
	rounds   int
	findings []Finding
}

// New checks o.
func New(o Options) (*Agent, error) {
	if o.MaxSteps < 0 {
		return nil, fmt.Errorf("agent: maxSteps must be 1 or more, got %d", o.MaxSteps)
	}
	if o.MaxSteps == 0 {
		o.MaxSteps = DefaultMaxSteps
	}
	switch o.BadCalls {
	case "":
		o.BadCalls = BadCallsReport
	case BadCallsReport, BadCallsFail:
	default:
		return nil, fmt.Errorf("agent: badCalls must be 'report' or 'fail', got %q", o.BadCalls)
	}
	if len(o.Tools) == 0 {
		return nil, fmt.Errorf("agent: tools must name at least one tool")
	}
	a := &Agent{o: o, tools: make(map[string]*Tool, len(o.Tools))}
	for i := range o.Tools {
		t := &o.Tools[i]
		if t.Name == "" {
			return nil, fmt.Errorf("agent: tools[%d] has no name", i)
		}
		if _, dup := a.tools[t.Name]; dup {
			return nil, fmt.Errorf("agent: tool %q is named twice", t.Name)
		}
		a.tools[t.Name] = t
	}
	return a, nil
}

// Steps is the number of model answers taken so far.
func (a *Agent) Steps() int { return a.steps }

// Rounds is the number of tool rounds run so far.
func (a *Agent) Rounds() int { return a.rounds }

// MaxSteps is the job's step limit.
func (a *Agent) MaxSteps() int { return a.o.MaxSteps }

// Findings are the bad calls seen so far.
func (a *Agent) Findings() []Finding { return a.findings }

// Answered takes a model answer's tool calls and returns the calls to run;
// none means the job is done. A model still calling tools at the step limit
// fails the job (ErrStepLimit), as does a bad call under BadCallsFail.
func (a *Agent) Answered(calls []conversation.ToolCall) ([]Call, error) {
	a.steps++
	if len(calls) == 0 {
		return nil, nil
	}
	if a.steps >= a.o.MaxSteps {
		return nil, &Error{Type: ErrStepLimit, Message: fmt.Sprintf("the model still asked for %s after %d steps (maxSteps %d)", callNames(calls), a.steps, a.o.MaxSteps)}
	}
	out := make([]Call, len(calls))
	for i, c := range calls {
		out[i] = a.resolve(c)
		if out[i].Tool == nil && a.o.BadCalls == BadCallsFail {
			f := a.findings[len(a.findings)-1]
			return nil, &Error{Type: ErrBadCall, Message: f.Message, Tool: f.Tool}
		}
	}
	return out, nil
}

// resolve finds a call's tool and reads its arguments; a bad call becomes a
// finding and a result telling the model what was wrong.
func (a *Agent) resolve(c conversation.ToolCall) Call {
	call := Call{ToolCall: c}
	bad := func(kind, msg string) Call {
		a.findings = append(a.findings, Finding{Kind: kind, Step: a.steps, Tool: c.Name, Arguments: c.Arguments, Message: msg})
		call.Result = "error: " + msg
		return call
	}
	t, ok := a.tools[c.Name]
	if !ok {
		return bad(FindingUnknownTool, fmt.Sprintf("unknown tool %q (tools: %s)", c.Name, a.names()))
	}
	args, err := parseArguments(c.Arguments)
	if err != nil {
		return bad(FindingMalformed, fmt.Sprintf("the arguments of %s are not a JSON object: %v", c.Name, err))
	}
	call.Tool, call.Args = t, args
	return call
}

// parseArguments reads a call's arguments: a JSON object, or nothing. The
// model's server wrote them: they are held to the nesting limit of every
// JSON the client reads from a server.
func parseArguments(s string) (map[string]any, error) {
	if strings.TrimSpace(s) == "" {
		return map[string]any{}, nil
	}
	if err := jsondepth.Check(s, "the text"); err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("got %s", truncate(s, 60))
	}
	return m, nil
}

// Finished takes the outcomes of a round's calls (in the calls' order) and
// returns the results to send back; a tool that failed fails the job.
func (a *Agent) Finished(calls []Call, outcomes []Outcome) ([]conversation.ToolResult, error) {
	a.rounds++
	rs := make([]conversation.ToolResult, len(calls))
	for i, c := range calls {
		rs[i] = conversation.ToolResult{ID: c.ID, Name: c.Name, Content: c.Result}
		if c.Tool == nil {
			continue
		}
		if i >= len(outcomes) {
			return nil, &Error{Type: ErrTool, Tool: c.Name, Message: "tool " + c.Name + " returned no result"}
		}
		if err := outcomes[i].Err; err != nil {
			if to := (*TimedOut)(nil); errors.As(err, &to) {
				return nil, &Error{Type: ErrTimeout, Tool: c.Name, Message: "tool " + c.Name + " " + err.Error()}
			}
			return nil, &Error{Type: ErrTool, Tool: c.Name, Message: "tool " + c.Name + " failed: " + err.Error()}
		}
		rs[i].Content = outcomes[i].Content
	}
	return rs, nil
}

func (a *Agent) names() string {
	n := make([]string, 0, len(a.tools))
	for k := range a.tools {
		n = append(n, k)
	}
	sort.Strings(n)
	return strings.Join(n, ", ")
}

func callNames(calls []conversation.ToolCall) string {
	n := make([]string, len(calls))
	for i, c := range calls {
		n[i] = c.Name
	}
	return "tools (" + strings.Join(n, ", ") + ")"
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
