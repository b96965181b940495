package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/conversation"
	clientproto "github.com/llmstream/xk6-llmstream/internal/protocol"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// reasoningHeaderFor asks for n reasoning tokens, Anthropic's with a
// redacted block.
func reasoningHeaderFor(protocol, n string) string {
	if protocol == "anthropic" {
		return n + ",redacted"
	}
	return n
}

// streamedSignatures are the signatures the client read, as the trace
// writes them (a Responses reasoning item's encrypted_content).
func streamedSignatures(t *testing.T, r *stream.Result) []string {
	t.Helper()
	var out []string
	for _, th := range r.Thoughts {
		if th.Kind == clientproto.SignedItem {
			var it struct {
				EncryptedContent string `json:"encrypted_content"`
			}
			require.NoError(t, json.Unmarshal([]byte(th.Signature), &it))
			out = append(out, it.EncryptedContent)
			continue
		}
		out = append(out, th.Signature)
	}
	return out
}

func thoughtsOf(r *stream.Result) []conversation.Thought {
	out := make([]conversation.Thought, len(r.Thoughts))
	for i, th := range r.Thoughts {
		out[i] = conversation.Thought{Kind: th.Kind, Signature: th.Signature, Text: th.Text, Call: th.Call}
	}
	return out
}

// Every protocol with reasoning streams it before the answer, in its own
// fields, read back by the client's decoder as reasoning: counted in the
// output, signed where the API signs, and in the trace as streamed.
func TestReasoningEveryProtocolReadsBack(t *testing.T) {
	s := newTestSim(t)
	for i, c := range toolCases() {
		t.Run(c.protocol, func(t *testing.T) {
			if c.protocol == "openai-chat" {
				c.base["stream_options"] = map[string]any{"include_usage": true}
			}
			h, err := conversation.New(conversation.Options{Protocol: c.protocol})
			require.NoError(t, err)
			h.User("why is the sky blue?")
			r := s.toolTurn(c, h, ReasoningHeader, reasoningHeaderFor(c.protocol, "5"))
			require.True(t, r.OK, "%+v", r.Err)
			rec := s.trace.recordsN(t, i+1)[i]
			assert.Equal(t, 5, countTokens(t, r.Reasoning), "%q", r.Reasoning)
			assert.Equal(t, rec.Reasoning, r.Reasoning)
			assert.NotEmpty(t, r.Text)
			assert.NotContains(t, r.Text, r.Reasoning)
			assert.Equal(t, int64(rec.CompletionTokens), r.OutputTokens, "the reasoning counts in the output")
			assert.Equal(t, rec.Signatures, streamedSignatures(t, r))
			want := map[string]int{"anthropic": 2, "gemini": 1, "openai-responses": 1}[c.protocol]
			assert.Len(t, rec.Signatures, want)
			if c.protocol != "anthropic" && c.protocol != "ollama" {
				require.NotNil(t, r.Usage)
				assert.Equal(t, int64(5), r.Usage.ReasoningTokens)
			}
		})
	}
}

// With tools: the reasoning comes before the calls. Sent back ('send'),
// the next step is answered; left out ('drop'), Anthropic and Gemini refuse
// the tool-use turn with their documented 400, the others answer.
func TestReasoningBackOnAToolTurn(t *testing.T) {
	s := newTestSim(t)
	for _, c := range toolCases() {
		for _, policy := range []string{conversation.ReasoningSend, conversation.ReasoningDrop} {
			t.Run(c.protocol+"/"+policy, func(t *testing.T) {
				h, err := conversation.New(conversation.Options{Protocol: c.protocol, Reasoning: policy})
				require.NoError(t, err)
				h.User("what is the weather?")
				hdr := []string{ReasoningHeader, reasoningHeaderFor(c.protocol, "4"), ToolCallsHeader, "1"}
				r := s.toolTurn(c, h, hdr...)
				require.True(t, r.OK, "%+v", r.Err)
				require.Len(t, r.ToolCalls, 1)
				require.NotEmpty(t, r.Reasoning)
				h.Answer(r.Text, r.Reasoning, callsOf(r), thoughtsOf(r)...)
				h.Results(resultsFor(callsOf(r)))
				body, err := json.Marshal(h.Body(c.base))
				require.NoError(t, err)
				resp := s.post(c.path, string(body), hdr...)
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				refuses := policy == conversation.ReasoningDrop && (c.protocol == "anthropic" || c.protocol == "gemini")
				if !refuses {
					assert.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
					return
				}
				assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", b)
				want := map[string]string{
					"anthropic": "Expected `thinking` or `redacted_thinking`, but found `tool_use`",
					"gemini":    "Function call is missing a thought_signature",
				}[c.protocol]
				assert.Contains(t, string(b), want)
			})
		}
	}
}

// A thinking block whose text or signature changed, or redacted data
// llm-sim did not issue, is refused; without reasoning on, nothing is
// checked.
func TestAnthropicRefusesAlteredThinking(t *testing.T) {
	s := newTestSim(t)
	c := toolCases()[2]
	require.Equal(t, "anthropic", c.protocol)
	h, err := conversation.New(conversation.Options{Protocol: c.protocol, Reasoning: conversation.ReasoningSend})
	require.NoError(t, err)
	h.User("q")
	r := s.toolTurn(c, h, ReasoningHeader, "4,redacted")
	require.Len(t, r.Thoughts, 2)
	for _, tc := range []struct {
		name string
		edit func(th []conversation.Thought)
		want string
	}{
		{"text", func(th []conversation.Thought) { th[0].Text += " (edited)" }, "messages.1.content.0: Invalid `signature` in `thinking` block"},
		{"signature", func(th []conversation.Thought) { th[0].Signature = "c2ln" }, "Invalid `signature`"},
		{"redacted", func(th []conversation.Thought) { th[1].Signature = "c2ln" }, "messages.1.content.1: Invalid `data`"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			th := thoughtsOf(r)
			tc.edit(th)
			hh, _ := conversation.New(conversation.Options{Protocol: c.protocol, Reasoning: conversation.ReasoningSend})
			hh.User("q")
			hh.Answer(r.Text, r.Reasoning, nil, th...)
			hh.User("and then?")
			body, err := json.Marshal(hh.Body(c.base))
			require.NoError(t, err)
			for on, status := range map[bool]int{true: http.StatusBadRequest, false: http.StatusOK} {
				var hdr []string
				if on {
					hdr = []string{ReasoningHeader, "4"}
				}
				resp := s.post(c.path, string(body), hdr...)
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				require.Equal(t, status, resp.StatusCode, "%s", b)
				if on {
					assert.Contains(t, string(b), tc.want)
					assert.Contains(t, string(b), `"type":"invalid_request_error"`)
				}
			}
		})
	}
}

// OpenAI chat streams delta.reasoning for a model whose reasoning_field
// says so (vLLM since 2026); the client reads either name.
func TestReasoningFieldOfVLLM(t *testing.T) {
	m := fastModel("m")
	m.ReasoningField, m.ReasoningTokens = "reasoning", 3
	s := newTestSim(t, m)
	resp := s.post("/v1/chat/completions", chatBody("q", 10, `"stream":true`))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Contains(t, string(b), `"delta":{"reasoning":`)
	assert.NotContains(t, string(b), `reasoning_content`)
	r := readWith(t, "openai-chat", s.post("/v1/chat/completions", chatBody("q", 10, `"stream":true`)))
	assert.Equal(t, 3, countTokens(t, r.Reasoning), "the model's default: %q", r.Reasoning)
	assert.Equal(t, int64(10), r.OutputTokens, "reasoning and text within max_tokens")
}

func TestReasoningRequestsRefused(t *testing.T) {
	s := newTestSim(t)
	for _, c := range []struct {
		path, body, value, want string
	}{
		{"/v1/chat/completions", chatBody("q", 10, `"stream":true`), "many", "reasoning tokens 1.."},
		{"/v1/chat/completions", chatBody("q", 10, `"stream":true`), "4,hidden", "may follow"},
		{"/v1/chat/completions", chatBody("q", 10, `"stream":true`), "4,redacted", "redacted thinking is Anthropic's"},
		{"/v1/chat/completions", chatBody("q", 10, ""), "4", "streamed requests only"},
		{"/v1/completions", `{"model":"m","prompt":"q","stream":true}`, "4", "not in openai-completions"},
	} {
		resp := s.post(c.path, c.body, ReasoningHeader, c.value)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s %s", c.path, c.value)
		assert.True(t, strings.Contains(string(b), c.want), "%s %s: %s", c.path, c.value, b)
	}
	// A model's default is not a request: what it cannot apply to gets an answer without reasoning.
	m := fastModel("d")
	m.ReasoningTokens = 4
	d := newTestSim(t, m)
	for _, body := range []struct{ path, body string }{
		{"/v1/chat/completions", chatBody("q", 10, "")},
		{"/v1/completions", `{"model":"d","prompt":"q","stream":true}`},
	} {
		resp := d.post(body.path, body.body)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, body.path)
	}
	bad := fastModel("b")
	bad.ReasoningField = "thoughts"
	cfg := DefaultConfig()
	cfg.Models = []ModelConfig{bad}
	assert.ErrorContains(t, cfg.Validate(), "reasoning_field")
}
