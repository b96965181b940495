package sim

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// OpenAI Chat Completions: POST /v1/chat/completions.

func init() { registerRoute("/v1/chat/completions", openAIChat{}) }

type openAIChat struct{}

func (openAIChat) name() string     { return "openai-chat" }
func (openAIChat) idPrefix() string { return "chatcmpl-" }

func (openAIChat) errorBody(e *apiError) []byte { return openAIErrorBody(e) }

func (openAIChat) parse(body []byte) (*genRequest, *apiError) {
	return parseOpenAI(body, func(r *openAIRequest, g *genRequest) *apiError { return chatPrompt(r.Messages, g) })
}

// chatPrompt sets g.Prompt to the concatenated text of the messages.
func chatPrompt(raw json.RawMessage, g *genRequest) *apiError {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return badRequest("messages", "'messages' is a required property")
	}
	var msgs []struct {
		Role    *string         `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return badRequest("messages", "'messages' must be an array of message objects: "+err.Error())
	}
	if len(msgs) == 0 {
		return badRequest("messages", "'messages' must contain at least one message")
	}
	var sb strings.Builder
	for i, m := range msgs {
		param := "messages[" + strconv.Itoa(i) + "]"
		if m.Role == nil || *m.Role == "" {
			return badRequest(param+".role", param+" has no 'role'")
		}
		c := bytes.TrimSpace(m.Content)
		if len(c) == 0 || bytes.Equal(c, []byte("null")) {
			continue // assistant tool-call turns have no content
		}
		if c[0] == '"' {
			var s string
			if err := json.Unmarshal(c, &s); err != nil {
				return badRequest(param+".content", err.Error())
			}
			sb.WriteString(s)
			continue
		}
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(c, &parts); err != nil {
			return badRequest(param+".content", param+".content must be a string or an array of content parts")
		}
		for _, p := range parts {
			if p.Type == "text" || p.Type == "input_text" {
				sb.WriteString(p.Text)
			}
		}
	}
	g.Prompt = sb.String()
	return nil
}

func (openAIChat) newStream(m *respMeta) streamRenderer {
	return &chatStream{openAIChunks: newOpenAIChunks(m, "chat.completion.chunk")}
}

type chatStream struct{ openAIChunks }

func (c *chatStream) start(out eventSink) error {
	b := append(c.begin(), `{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}`...)
	return out.event(c.end(b, 0), 0)
}

func (c *chatStream) tokens(out eventSink, text []byte, n, total int) error {
	b := append(c.begin(), `{"index":0,"delta":{"content":`...)
	b = appendJSONString(b, text)
	b = append(b, `},"logprobs":null,"finish_reason":null}`...)
	return out.event(c.end(b, total), n)
}

func (c *chatStream) finish(out eventSink, reason string, total int) error {
	b := append(c.begin(), `{"index":0,"delta":{},"logprobs":null,"finish_reason":`...)
	b = finishReasonJSON(b, reason)
	b = append(b, '}')
	return c.finishChunk(out, b, total)
}

func (openAIChat) complete(m *respMeta, text []byte, reason string, completion int) []byte {
	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	return openAIAnswer(m, "chat.completion", struct {
		Index        int     `json:"index"`
		Message      message `json:"message"`
		Logprobs     any     `json:"logprobs"`
		FinishReason string  `json:"finish_reason"`
	}{Message: message{Role: "assistant", Content: string(text)}, FinishReason: reason}, completion)
}

func (openAIChat) truncated(m *respMeta) []byte {
	return openAITruncated(m, "chat.completion", `{"index":0,"message":{"role":"assistant","content":"tru`)
}
