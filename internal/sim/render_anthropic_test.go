package sim

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// namedEvent is an SSE event with its event: line.
type namedEvent struct {
	name string
	data map[string]any
	raw  string
}

// readNamedSSE reads LF-framed events with an event: line and a JSON data line.
func readNamedSSE(t *testing.T, r io.Reader) []namedEvent {
	t.Helper()
	var out []namedEvent
	var cur namedEvent
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			require.NotEmpty(t, cur.raw, "an event without data")
			require.NoError(t, json.Unmarshal([]byte(cur.raw), &cur.data), cur.raw)
			out = append(out, cur)
			cur = namedEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.raw = strings.TrimPrefix(line, "data: ")
		default:
			t.Fatalf("unexpected line %q", line)
		}
	}
	require.NoError(t, sc.Err())
	require.Empty(t, cur.raw, "the last event is terminated")
	return out
}

func eventNames(evs []namedEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.name
	}
	return out
}

func TestAnthropicStreamHasTheMessagesEventSequence(t *testing.T) {
	s := newTestSim(t)
	resp := s.post("/v1/messages", `{"model":"m","stream":true,"max_tokens":3,"system":"Be brief.",`+
		`"messages":[{"role":"user","content":[{"type":"text","text":"Hello there"}]}]}`)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream; charset=utf-8", resp.Header.Get("Content-Type"))
	evs := readNamedSSE(t, resp.Body)
	assert.Equal(t, []string{
		"message_start", "content_block_start", "ping",
		"content_block_delta", "content_block_delta", "content_block_delta",
		"content_block_stop", "message_delta", "message_stop",
	}, eventNames(evs))
	for _, e := range evs {
		assert.Equal(t, e.name, e.data["type"], "event: equals data.type")
	}
	msg := evs[0].data["message"].(map[string]any)
	assert.Equal(t, "msg_", msg["id"].(string)[:4])
	usage := msg["usage"].(map[string]any)
	assert.EqualValues(t, countTokens(t, "Be brief.Hello there"), usage["input_tokens"], "system and message text are the prompt")
	assert.EqualValues(t, 1, usage["output_tokens"], "a placeholder, as the real API sends")
	delta := evs[7].data
	assert.Equal(t, "max_tokens", delta["delta"].(map[string]any)["stop_reason"])
	assert.EqualValues(t, 3, delta["usage"].(map[string]any)["output_tokens"])
}

func TestAnthropicRequiresMaxTokens(t *testing.T) {
	s := newTestSim(t)
	resp := s.post("/v1/messages", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	b, _ := io.ReadAll(resp.Body)
	assert.JSONEq(t, `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: Field required"}}`, string(b))
}

func TestAnthropicOverloadAndMidStreamErrorShapes(t *testing.T) {
	s := newTestSim(t)
	resp := s.post("/v1/messages", `{"max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, FaultHeader, "status=529")
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, 529, resp.StatusCode)
	assert.Contains(t, string(b), `"type":"overloaded_error"`)

	resp = s.post("/v1/messages", `{"stream":true,"max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, FaultHeader, "error@2")
	evs := readNamedSSE(t, resp.Body)
	resp.Body.Close()
	last := evs[len(evs)-1]
	assert.Equal(t, "error", last.name, "nothing follows an error")
	assert.Equal(t, "api_error", last.data["error"].(map[string]any)["type"])
}

func TestAnthropicNonStreamedMessage(t *testing.T) {
	s := newTestSim(t)
	resp := s.post("/v1/messages", `{"max_tokens":4,"messages":[{"role":"user","content":"hi"}]}`)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var msg struct {
		Type       string `json:"type"`
		Content    []struct{ Type, Text string }
		StopReason string `json:"stop_reason"`
		Usage      struct {
			InputTokens  int `json:"input_tokens"`
			OutputTokens int `json:"output_tokens"`
		}
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&msg))
	assert.Equal(t, "message", msg.Type)
	require.Len(t, msg.Content, 1)
	assert.Equal(t, 4, countTokens(t, msg.Content[0].Text))
	assert.Equal(t, "max_tokens", msg.StopReason)
	assert.Equal(t, 4, msg.Usage.OutputTokens)
}
