package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/conversation"
	"github.com/llmstream/xk6-llmstream/internal/protocol"
	"github.com/llmstream/xk6-llmstream/internal/sim"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// The loop against llm-sim, per tool-capable protocol: the history goes out
// as internal/conversation encodes it, the answers are read with the
// client's own decoder, as a k6 call does.

type simRoute struct{ path string }

var simRoutes = map[string]simRoute{ //nolint:gochecknoglobals // test table
	"openai-chat":      {"/v1/chat/completions"},
	"openai-responses": {"/v1/responses"},
	"anthropic":        {"/v1/messages"},
	"gemini":           {"/v1beta/models/m:streamGenerateContent?alt=sse"},
	"ollama":           {"/api/chat"},
}

func simModel(t *testing.T, url, proto string, h *conversation.History, tools []Tool, header http.Header) Model {
	decl, ok := Declarations(proto, tools)
	require.True(t, ok)
	base := map[string]any{"model": "m", "stream": true, "max_tokens": 300, "tools": decl}
	spec, err := protocol.Lookup(proto)
	require.NoError(t, err)
	return func(ctx context.Context, rs []conversation.ToolResult) ([]conversation.ToolCall, error) {
		if rs != nil {
			h.Results(rs)
		}
		body, _ := json.Marshal(h.Body(base))
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+simRoutes[proto].path, bytes.NewReader(body))
		req.Header = header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("status %d", resp.StatusCode)
		}
		c := stream.NewCall(stream.Config{Spec: spec, CountTokens: func(s string) int { return len(strings.Fields(s)) }}, time.Now())
		c.Headers = time.Now()
		if err := c.Consume(resp.Body); err != nil {
			return nil, err
		}
		r := c.Finish()
		if !r.OK {
			return nil, errors.New(r.Err.Error())
		}
		calls := make([]conversation.ToolCall, len(r.ToolCalls))
		for i, tc := range r.ToolCalls {
			calls[i] = conversation.ToolCall{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments}
		}
		h.Answer(r.Text, r.Reasoning, calls)
		return calls, nil
	}
}

func newSim(t *testing.T) string {
	cfg := sim.DefaultConfig()
	m, err := sim.NewModel("m", "fast")
	require.NoError(t, err)
	cfg.Models = []sim.ModelConfig{m}
	srv, err := sim.New(cfg)
	require.NoError(t, err)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	t.Cleanup(func() { _ = srv.Close() })
	return ts.URL
}

func simTools() []Tool {
	str := map[string]any{"type": "string"}
	return []Tool{
		{Name: "weather", Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": str}}},
		{Name: "clock", Parameters: map[string]any{"type": "object", "properties": map[string]any{"zone": str}}},
	}
}

func TestAgainstSimEveryProtocol(t *testing.T) {
	url := newSim(t)
	for proto := range simRoutes {
		t.Run(proto, func(t *testing.T) {
			h, err := conversation.New(conversation.Options{Protocol: proto})
			require.NoError(t, err)
			h.User("plan my day")
			a, err := New(Options{Tools: simTools()})
			require.NoError(t, err)
			seen := map[string]int{}
			funcs := map[string]Func{}
			for _, tl := range simTools() {
				funcs[tl.Name] = func(_ context.Context, args map[string]any) (string, error) {
					seen[tl.Name]++
					if len(args) == 0 {
						return "", errors.New("no arguments")
					}
					return tl.Name + " ok", nil
				}
			}
			funcs = serialized(funcs)
			rep, err := Run(context.Background(), a, simModel(t, url, proto, h, simTools(), http.Header{sim.ToolCallsHeader: {"2,1"}}), funcs)
			require.NoError(t, err)
			assert.Equal(t, 3, rep.Steps)
			assert.Equal(t, 2, rep.Rounds)
			assert.Equal(t, 3, rep.Calls)
			assert.Empty(t, rep.Findings)
			assert.Equal(t, 3, seen["weather"]+seen["clock"], "every call ran its tool")
			msgs := h.Messages()
			assert.NotEmpty(t, msgs[len(msgs)-1].Text, "the last answer is text")
		})
	}
}

func TestAgainstSimFindingsAndLimit(t *testing.T) {
	url := newSim(t)
	h, _ := conversation.New(conversation.Options{Protocol: "anthropic"})
	h.User("go")
	ok := "fine"
	tools := []Tool{{Name: "weather", Canned: &ok}, {Name: "clock", Canned: &ok}}
	a, _ := New(Options{Tools: tools})
	rep, err := Run(context.Background(), a, simModel(t, url, "anthropic", h, tools, http.Header{
		sim.ToolCallsHeader: {"2"}, sim.ToolFaultHeader: {"unknown_tool"},
	}), nil)
	require.NoError(t, err)
	require.Len(t, rep.Findings, 1)
	assert.Equal(t, FindingUnknownTool, rep.Findings[0].Kind)
	assert.Equal(t, sim.UnknownToolName, rep.Findings[0].Tool)

	h2, _ := conversation.New(conversation.Options{Protocol: "gemini"})
	h2.User("go")
	a2, _ := New(Options{Tools: tools, MaxSteps: 2})
	_, err = Run(context.Background(), a2, simModel(t, url, "gemini", h2, tools, http.Header{sim.ToolCallsHeader: {"1,1,1"}}), nil)
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, ErrStepLimit, e.Type)
}

// serialized runs funcs one at a time (their test bookkeeping is not
// goroutine-safe; the calls still start in parallel).
func serialized(funcs map[string]Func) map[string]Func {
	var mu sync.Mutex
	out := make(map[string]Func, len(funcs))
	for n, f := range funcs {
		out[n] = func(ctx context.Context, args map[string]any) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			return f(ctx, args)
		}
	}
	return out
}
