package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/conversation"
)

// scripted is a model that answers with the given rounds of calls, then
// with none, and keeps the results it was sent.
type scripted struct {
	rounds [][]conversation.ToolCall
	got    [][]conversation.ToolResult
}

func (s *scripted) model(_ context.Context, rs []conversation.ToolResult) ([]conversation.ToolCall, error) {
	if rs != nil {
		s.got = append(s.got, rs)
	}
	if len(s.rounds) == 0 {
		return nil, nil
	}
	r := s.rounds[0]
	s.rounds = s.rounds[1:]
	return r, nil
}

func call(id, name, args string) conversation.ToolCall {
	return conversation.ToolCall{ID: id, Name: name, Arguments: args}
}

func canned(s string) *string { return &s }

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestTwoRoundsOneParallel(t *testing.T) {
	a, err := New(Options{Tools: []Tool{{Name: "weather"}, {Name: "clock", Canned: canned("12:00"), Delay: 30 * time.Millisecond}}})
	require.NoError(t, err)
	m := &scripted{rounds: [][]conversation.ToolCall{
		{call("a", "weather", `{"city":"Oslo"}`), call("b", "clock", `{}`)},
		{call("c", "weather", `{"city":"Rome"}`)},
	}}
	var running, maxRunning atomic.Int32
	funcs := map[string]Func{"weather": func(_ context.Context, args map[string]any) (string, error) {
		n := running.Add(1)
		defer running.Add(-1)
		if n > maxRunning.Load() {
			maxRunning.Store(n)
		}
		time.Sleep(30 * time.Millisecond)
		return "sunny in " + args["city"].(string), nil
	}}
	rep, err := Run(context.Background(), a, m.model, funcs)
	require.NoError(t, err)
	assert.Equal(t, 3, rep.Steps)
	assert.Equal(t, 2, rep.Rounds)
	assert.Equal(t, 3, rep.Calls)
	assert.Empty(t, rep.Findings)
	require.Len(t, m.got, 2)
	assert.Equal(t, []conversation.ToolResult{{ID: "a", Name: "weather", Content: "sunny in Oslo"}, {ID: "b", Name: "clock", Content: "12:00"}}, m.got[0])
	assert.Equal(t, "sunny in Rome", m.got[1][0].Content)
	// Each round waits for its slowest call: at least two 30 ms waits, the
	// parallel round's calls overlapping rather than adding up.
	assert.GreaterOrEqual(t, rep.ToolTime, 60*time.Millisecond)
}

func TestParallelCallsOverlap(t *testing.T) {
	a, _ := New(Options{Tools: []Tool{{Name: "slow"}}})
	release := make(chan struct{})
	var started atomic.Int32
	funcs := map[string]Func{"slow": func(context.Context, map[string]any) (string, error) {
		if started.Add(1) == 2 {
			close(release)
		}
		select {
		case <-release: // both calls are running at once, or this waits for the timeout
			return "ok", nil
		case <-time.After(5 * time.Second):
			return "", errors.New("the calls of one answer did not run in parallel")
		}
	}}
	m := &scripted{rounds: [][]conversation.ToolCall{{call("a", "slow", ""), call("b", "slow", "")}}}
	_, err := Run(context.Background(), a, m.model, funcs)
	require.NoError(t, err)
}

func TestToolErrorFailsTheJob(t *testing.T) {
	a, _ := New(Options{Tools: []Tool{{Name: "f"}, {Name: "g", Canned: canned("x")}}})
	m := &scripted{rounds: [][]conversation.ToolCall{{call("1", "g", ""), call("2", "f", "{}")}}}
	_, err := Run(context.Background(), a, m.model, map[string]Func{"f": func(context.Context, map[string]any) (string, error) {
		return "", errors.New("database down")
	}})
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, ErrTool, e.Type)
	assert.Equal(t, "f", e.Tool)
	assert.Contains(t, e.Message, "database down")
}

func TestStepLimit(t *testing.T) {
	a, _ := New(Options{Tools: []Tool{{Name: "f", Canned: canned("again")}}, MaxSteps: 3})
	loop := make([][]conversation.ToolCall, 10)
	for i := range loop {
		loop[i] = []conversation.ToolCall{call("c", "f", "")}
	}
	m := &scripted{rounds: loop}
	rep, err := Run(context.Background(), a, m.model, nil)
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, ErrStepLimit, e.Type)
	assert.Contains(t, e.Message, "maxSteps 3")
	assert.Equal(t, 3, rep.Steps)
	assert.Equal(t, 2, rep.Rounds)
}

func TestBadCallsAreFindings(t *testing.T) {
	a, _ := New(Options{Tools: []Tool{{Name: "f", Canned: canned("fine")}}})
	m := &scripted{rounds: [][]conversation.ToolCall{{
		call("1", "nope", "{}"), call("2", "f", `{"a":`), call("3", "f", `[1]`), call("4", "f", `{"a":1}`),
	}}}
	rep, err := Run(context.Background(), a, m.model, nil)
	require.NoError(t, err, "bad calls are reported, not a crash")
	require.Len(t, rep.Findings, 3)
	assert.Equal(t, FindingUnknownTool, rep.Findings[0].Kind)
	assert.Equal(t, "nope", rep.Findings[0].Tool)
	assert.Equal(t, FindingMalformed, rep.Findings[1].Kind)
	assert.Equal(t, `{"a":`, rep.Findings[1].Arguments)
	assert.Equal(t, FindingMalformed, rep.Findings[2].Kind)
	assert.Equal(t, 1, rep.Findings[0].Step)
	// The model is told what was wrong, and the good call still ran.
	rs := m.got[0]
	assert.True(t, strings.HasPrefix(rs[0].Content, "error: unknown tool \"nope\" (tools: f)"), rs[0].Content)
	assert.True(t, strings.HasPrefix(rs[1].Content, "error: the arguments of f"), rs[1].Content)
	assert.Equal(t, "fine", rs[3].Content)

	strict, _ := New(Options{Tools: []Tool{{Name: "f"}}, BadCalls: BadCallsFail})
	_, err = Run(context.Background(), strict, (&scripted{rounds: [][]conversation.ToolCall{{call("1", "nope", "")}}}).model, nil)
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, ErrBadCall, e.Type)
}

func TestModelErrorEndsTheJob(t *testing.T) {
	a, _ := New(Options{Tools: []Tool{{Name: "f"}}})
	boom := errors.New("http_5xx: overloaded")
	_, err := Run(context.Background(), a, func(context.Context, []conversation.ToolResult) ([]conversation.ToolCall, error) {
		return nil, boom
	}, nil)
	assert.ErrorIs(t, err, boom)
}

func TestCannedDelayHonoursCancel(t *testing.T) {
	a, _ := New(Options{Tools: []Tool{{Name: "f", Canned: canned("x"), Delay: time.Hour}}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	m := &scripted{rounds: [][]conversation.ToolCall{{call("1", "f", "")}}}
	_, err := Run(ctx, a, m.model, nil)
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, ErrTool, e.Type)
}

func TestOptionsChecked(t *testing.T) {
	for _, o := range []Options{
		{},
		{Tools: []Tool{{Name: ""}}},
		{Tools: []Tool{{Name: "a"}, {Name: "a"}}},
		{Tools: []Tool{{Name: "a"}}, MaxSteps: -1},
		{Tools: []Tool{{Name: "a"}}, BadCalls: "ignore"},
	} {
		_, err := New(o)
		assert.Error(t, err, "%+v", o)
	}
}

func TestDeclarations(t *testing.T) {
	tools := []Tool{{Name: "b", Description: "bee"}, {Name: "a", Parameters: map[string]any{"type": "object"}}}
	for proto, want := range map[string]string{
		"openai-chat":      `[{"function":{"name":"a","parameters":{"type":"object"}},"type":"function"},{"function":{"description":"bee","name":"b","parameters":{"properties":{},"type":"object"}},"type":"function"}]`,
		"openai-responses": `[{"name":"a","parameters":{"type":"object"},"type":"function"},{"description":"bee","name":"b","parameters":{"properties":{},"type":"object"},"type":"function"}]`,
		"anthropic":        `[{"input_schema":{"type":"object"},"name":"a"},{"description":"bee","input_schema":{"properties":{},"type":"object"},"name":"b"}]`,
		"gemini":           `[{"functionDeclarations":[{"name":"a","parameters":{"type":"object"}},{"description":"bee","name":"b","parameters":{"properties":{},"type":"object"}}]}]`,
	} {
		d, ok := Declarations(proto, tools)
		require.True(t, ok)
		assert.JSONEq(t, want, mustJSON(t, d), proto)
	}
	_, ok := Declarations("tgi", tools)
	assert.False(t, ok)
}

// A tool past its Timeout fails the job with ErrTimeout: one that heeds its
// context is stopped there, one that does not is judged when it returns, a
// canned latency is cut at it.
func TestToolTimeoutFailsTheJob(t *testing.T) {
	const to = 20 * time.Millisecond
	for name, c := range map[string]struct {
		tool Tool
		fn   Func
	}{
		"heeds its context": {Tool{Name: "f", Timeout: to}, func(ctx context.Context, _ map[string]any) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}},
		"ignores it": {Tool{Name: "f", Timeout: to}, func(context.Context, map[string]any) (string, error) {
			time.Sleep(2 * to)
			return "late", nil
		}},
		"canned": {Tool{Name: "f", Canned: canned("x"), Delay: time.Hour, Timeout: to}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			a, _ := New(Options{Tools: []Tool{c.tool}})
			m := &scripted{rounds: [][]conversation.ToolCall{{call("1", "f", "{}")}}}
			start := time.Now()
			_, err := Run(context.Background(), a, m.model, map[string]Func{"f": c.fn})
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, ErrTimeout, e.Type)
			assert.Equal(t, "f", e.Tool)
			assert.Contains(t, e.Message, "timeout of 20ms")
			assert.Less(t, time.Since(start), time.Minute)
		})
	}
	a, _ := New(Options{Tools: []Tool{{Name: "f", Timeout: time.Minute}}})
	m := &scripted{rounds: [][]conversation.ToolCall{{call("1", "f", "{}")}}}
	_, err := Run(context.Background(), a, m.model, map[string]Func{"f": func(context.Context, map[string]any) (string, error) { return "ok", nil }})
	require.NoError(t, err, "within its timeout")
}

// TestDeeplyNestedArgumentsAreMalformed: arguments nested past the limit
// of every JSON the client reads from a server are a malformed call, told
// to the model, not decoded.
func TestDeeplyNestedArgumentsAreMalformed(t *testing.T) {
	a, _ := New(Options{Tools: []Tool{{Name: "f", Canned: canned("fine")}}})
	deep := `{"a":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`
	m := &scripted{rounds: [][]conversation.ToolCall{{call("1", "f", deep)}}}
	rep, err := Run(context.Background(), a, m.model, nil)
	require.NoError(t, err)
	require.Len(t, rep.Findings, 1)
	assert.Equal(t, FindingMalformed, rep.Findings[0].Kind)
	assert.Contains(t, rep.Findings[0].Message, "nested too deeply")
}
