package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/conversation"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// toolCase is a tool-capable protocol as a client calls it: its route, the
// request fields that declare two tools, and its word for a tool-call stop.
type toolCase struct {
	protocol, path string
	base           map[string]any
	finish         string
}

const weatherSchema = `{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}}}`
const clockSchema = `{"type":"object","properties":{"zone":{"type":"string"},"utc":{"type":"boolean"}}}`

func rawJSON(s string) json.RawMessage { return json.RawMessage(s) }

func openAITools() []any {
	return []any{
		map[string]any{"type": "function", "function": map[string]any{"name": "weather", "parameters": rawJSON(weatherSchema)}},
		map[string]any{"type": "function", "function": map[string]any{"name": "clock", "parameters": rawJSON(clockSchema)}},
	}
}

func toolCases() []toolCase {
	return []toolCase{
		{"openai-chat", "/v1/chat/completions", map[string]any{"model": "m", "stream": true, "max_tokens": 200, "tools": openAITools()}, "tool_calls"},
		{"ollama", "/api/chat", map[string]any{"model": "m", "options": map[string]any{"num_predict": 200}, "tools": openAITools()}, "stop"},
		{"anthropic", "/v1/messages", map[string]any{"model": "m", "stream": true, "max_tokens": 200, "tools": []any{
			map[string]any{"name": "weather", "input_schema": rawJSON(weatherSchema)},
			map[string]any{"name": "clock", "input_schema": rawJSON(clockSchema)},
		}}, "tool_use"},
		{"gemini", "/v1beta/models/m:streamGenerateContent?alt=sse", map[string]any{"tools": []any{map[string]any{"functionDeclarations": []any{
			map[string]any{"name": "weather", "parameters": rawJSON(weatherSchema)},
			map[string]any{"name": "clock", "parameters": rawJSON(clockSchema)},
		}}}, "generationConfig": map[string]any{"maxOutputTokens": 200}}, "STOP"},
		{"openai-responses", "/v1/responses", map[string]any{"model": "m", "stream": true, "max_output_tokens": 200, "tools": []any{
			map[string]any{"type": "function", "name": "weather", "parameters": rawJSON(weatherSchema)},
			map[string]any{"type": "function", "name": "clock", "parameters": rawJSON(clockSchema)},
		}}, "completed"},
	}
}

func (s *testSim) toolTurn(c toolCase, h *conversation.History, header ...string) *stream.Result {
	s.t.Helper()
	body, err := json.Marshal(h.Body(c.base))
	require.NoError(s.t, err)
	resp := s.post(c.path, string(body), header...)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		s.t.Fatalf("%s: status %d: %s", c.protocol, resp.StatusCode, b)
	}
	return readWith(s.t, c.protocol, resp)
}

func callsOf(r *stream.Result) []conversation.ToolCall {
	out := make([]conversation.ToolCall, len(r.ToolCalls))
	for i, c := range r.ToolCalls {
		out[i] = conversation.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
	}
	return out
}

func resultsFor(calls []conversation.ToolCall) []conversation.ToolResult {
	out := make([]conversation.ToolResult, len(calls))
	for i, c := range calls {
		out[i] = conversation.ToolResult{ID: c.ID, Name: c.Name, Content: "result of " + c.Name}
	}
	return out
}

// Two tool rounds (two parallel calls, then one) and a text answer, each
// round read back with the client's own decoder and sent back as that API's
// history.
func TestToolRoundsEveryProtocol(t *testing.T) {
	s := newTestSim(t)
	for _, c := range toolCases() {
		t.Run(c.protocol, func(t *testing.T) {
			h, err := conversation.New(conversation.Options{Protocol: c.protocol})
			require.NoError(t, err)
			h.User("what is the weather and the time?")
			for round, want := range []int{2, 1} {
				r := s.toolTurn(c, h, ToolCallsHeader, "2,1")
				require.True(t, r.OK, "round %d: %+v", round, r.Err)
				assert.Equal(t, c.finish, r.FinishReason, "round %d", round)
				require.Len(t, r.ToolCalls, want, "round %d", round)
				names := map[string]bool{}
				for _, tc := range r.ToolCalls {
					names[tc.Name] = true
					var args map[string]any
					require.NoError(t, json.Unmarshal([]byte(tc.Arguments), &args), "round %d %s: %q", round, tc.Name, tc.Arguments)
					assert.NotEmpty(t, args)
					if tc.Name == "weather" {
						assert.IsType(t, "", args["city"])
						assert.IsType(t, float64(0), args["days"])
					}
				}
				assert.Len(t, names, want, "parallel calls are of distinct tools")
				for n := range names {
					assert.Contains(t, []string{"weather", "clock"}, n)
				}
				assert.Empty(t, r.Text)
				calls := callsOf(r)
				h.Answer(r.Text, "", calls)
				h.Results(resultsFor(calls))
			}
			r := s.toolTurn(c, h, ToolCallsHeader, "2,1")
			require.True(t, r.OK)
			assert.Empty(t, r.ToolCalls, "every round done: text")
			assert.NotEmpty(t, r.Text)
			// A new user turn starts the rounds over.
			h.Answer(r.Text, "", nil)
			h.User("and tomorrow?")
			r = s.toolTurn(c, h, ToolCallsHeader, "2,1")
			assert.Len(t, r.ToolCalls, 2)
		})
	}
}

func TestToolCallsAreDeterministic(t *testing.T) {
	s := newTestSim(t)
	c := toolCases()[0]
	h, _ := conversation.New(conversation.Options{Protocol: c.protocol})
	h.User("same question")
	a := s.toolTurn(c, h, ToolCallsHeader, "2", "X-Request-Id", "r1")
	b := s.toolTurn(c, h, ToolCallsHeader, "2", "X-Request-Id", "r1")
	assert.Equal(t, a.ToolCalls, b.ToolCalls)
}

func TestToolFaults(t *testing.T) {
	s := newTestSim(t)
	for _, c := range toolCases() {
		h, _ := conversation.New(conversation.Options{Protocol: c.protocol})
		h.User("q")
		r := s.toolTurn(c, h, ToolCallsHeader, "2", ToolFaultHeader, "unknown_tool")
		require.Len(t, r.ToolCalls, 2, c.protocol)
		assert.Equal(t, UnknownToolName, r.ToolCalls[0].Name, c.protocol)
		assert.NotEqual(t, UnknownToolName, r.ToolCalls[1].Name, c.protocol)

		r = s.toolTurn(c, h, ToolCallsHeader, "1", ToolFaultHeader, "malformed_arguments")
		require.Len(t, r.ToolCalls, 1, c.protocol)
		var v map[string]any
		assert.Error(t, json.Unmarshal([]byte(r.ToolCalls[0].Arguments), &v), "%s: %q", c.protocol, r.ToolCalls[0].Arguments)
	}
}

// Max tokens cuts a tool-call answer as it cuts text: finish "length" and
// the last call's arguments end where the answer did.
func TestToolCallsCutByMaxTokens(t *testing.T) {
	s := newTestSim(t)
	c := toolCases()[0]
	c.base["max_tokens"] = 3
	h, _ := conversation.New(conversation.Options{Protocol: c.protocol})
	h.User("q")
	r := s.toolTurn(c, h, ToolCallsHeader, "2")
	assert.Equal(t, "length", r.FinishReason)
	require.Len(t, r.ToolCalls, 1)
	assert.Len(t, r.ToolCalls[0].Arguments, 3*argFragmentBytes)
	require.Eventually(t, func() bool { return len(s.trace.records(t)) == 1 }, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, 3, s.trace.records(t)[0].CompletionTokens)
}

func TestToolRequestsRefused(t *testing.T) {
	s := newTestSim(t)
	for _, c := range []struct {
		path, body, want string
		header           []string
	}{
		{"/v1/chat/completions", chatBody("q", 10, `"stream":true`), "declares no tools", []string{ToolCallsHeader, "1"}},
		{"/v1/chat/completions", chatBody("q", 10, `"tools":[{"type":"function","function":{"name":"f"}}]`), "integers", []string{ToolCallsHeader, "two"}},
		{"/v1/chat/completions", chatBody("q", 10, ""), ToolCallsHeader, []string{ToolFaultHeader, "unknown_tool"}},
		{"/v1/chat/completions", chatBody("q", 10, `"tools":[{"type":"function","function":{"name":"f"}}]`), "unknown_tool", []string{ToolCallsHeader, "1", ToolFaultHeader, "slow"}},
		{"/v1/chat/completions", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"q"}],"tools":[{"type":"function","function":{"name":"f"}}]}`, "streamed", []string{ToolCallsHeader, "1"}},
		{"/v1/completions", `{"model":"m","prompt":"q","stream":true}`, "not in openai-completions", []string{ToolCallsHeader, "1"}},
		{"/api/generate", `{"model":"m","prompt":"q"}`, "/api/chat", []string{ToolCallsHeader, "1"}},
	} {
		resp := s.post(c.path, c.body, c.header...)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s %v", c.path, c.header)
		assert.True(t, strings.Contains(string(b), c.want), "%s %v: %s", c.path, c.header, b)
	}
}

// A model's tool_calls answers requests that declare tools without the
// header; a request it cannot apply to gets text, not a 400.
func TestToolCallsByDefault(t *testing.T) {
	m := fastModel("m")
	m.ToolCalls = "1"
	s := newTestSim(t, m)
	c := toolCases()[0]
	h, _ := conversation.New(conversation.Options{Protocol: c.protocol})
	h.User("q")
	r := s.toolTurn(c, h)
	require.Len(t, r.ToolCalls, 1)
	h.Answer("", "", callsOf(r))
	h.Results(resultsFor(callsOf(r)))
	assert.Empty(t, s.toolTurn(c, h).ToolCalls, "one round, then text")
	assert.Len(t, s.toolTurn(c, h, ToolCallsHeader, "1,2").ToolCalls, 2, "the header wins")
	for _, body := range []string{chatBody("q", 10, `"stream":true`), chatBody("q", 10, `"tools":[{"type":"function","function":{"name":"f"}}]`)} {
		resp := s.post("/v1/chat/completions", body)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, body)
	}
	bad := fastModel("b")
	bad.ToolCalls = "two"
	cfg := DefaultConfig()
	cfg.Models = []ModelConfig{bad}
	assert.ErrorContains(t, cfg.Validate(), "tool_calls")
}
