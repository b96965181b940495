package sim

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// Anthropic Messages: POST /v1/messages. The stream is named events
// (event: = data.type): message_start with the input usage, one text block
// (content_block_start, ping, text_delta…, content_block_stop),
// message_delta with the stop reason and the cumulative output count,
// message_stop. No [DONE].

func init() { registerRoute("/v1/messages", anthropic{}) }

type anthropic struct{}

func (anthropic) name() string     { return "anthropic" }
func (anthropic) idPrefix() string { return "msg_" }

func (anthropic) parse(body []byte) (*genRequest, *apiError) {
	var req struct {
		Model     string          `json:"model"`
		MaxTokens *int64          `json:"max_tokens"`
		Messages  json.RawMessage `json:"messages"`
		System    json.RawMessage `json:"system"`
		Stream    *bool           `json:"stream"`
	}
	if e := decodeBody(body, &req); e != nil {
		return nil, e
	}
	// The real API has no default output length: max_tokens is required.
	if req.MaxTokens == nil {
		return nil, badRequest("max_tokens", "max_tokens: Field required")
	}
	g := &genRequest{Model: req.Model, Stream: req.Stream != nil && *req.Stream}
	var e *apiError
	if g.MaxTokens, e = maxTokensField("max_tokens", req.MaxTokens); e != nil {
		return nil, e
	}
	var sb strings.Builder
	if e := appendContentText(&sb, req.System, "system"); e != nil {
		return nil, e
	}
	if e := appendMessagesText(&sb, req.Messages, "messages"); e != nil {
		return nil, e
	}
	g.Prompt = sb.String()
	return g, nil
}

// appendMessagesText appends the text of a required, non-empty list of
// {role, content} messages (Anthropic, Ollama and Responses share the shape).
func appendMessagesText(sb *strings.Builder, raw json.RawMessage, param string) *apiError {
	if len(raw) == 0 || string(raw) == "null" {
		return badRequest(param, param+": Field required")
	}
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return badRequest(param, param+" must be an array of message objects")
	}
	if len(msgs) == 0 {
		return badRequest(param, param+": at least one message is required")
	}
	for i, m := range msgs {
		if m.Role == "" {
			return badRequest(indexed(param, i)+".role", indexed(param, i)+".role: Field required")
		}
		if e := appendContentText(sb, m.Content, indexed(param, i)+".content"); e != nil {
			return e
		}
	}
	return nil
}

// anthropicErrorType is the error.type Anthropic gives an HTTP status.
func anthropicErrorType(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusServiceUnavailable, 529:
		return "overloaded_error"
	case http.StatusGatewayTimeout:
		return "timeout_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

type anthropicError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

func newAnthropicError(e *apiError) anthropicError {
	return anthropicError{Type: anthropicErrorType(e.Status), Message: e.Message}
}

// errorBody is {"type":"error","error":{"type","message"}}.
func (anthropic) errorBody(e *apiError) []byte {
	return mustJSON(struct {
		Type  string         `json:"type"`
		Error anthropicError `json:"error"`
	}{"error", newAnthropicError(e)})
}

// anthropicStopReason maps the engine's finish reason.
func anthropicStopReason(reason string) string {
	switch reason {
	case "length":
		return "max_tokens"
	case toolFinish:
		return "tool_use"
	}
	return "end_turn"
}

// anthropicUsage is a Message's usage: input_tokens excludes the tokens read
// from the cache, which are reported apart.
type anthropicUsage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

func newAnthropicUsage(m *respMeta, output int) anthropicUsage {
	return anthropicUsage{InputTokens: m.promptTokens - m.cachedTokens, CacheReadInputTokens: m.cachedTokens, OutputTokens: output}
}

type anthropicText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type anthropicMessage struct {
	ID           string          `json:"id"`
	Type         string          `json:"type"`
	Role         string          `json:"role"`
	Model        string          `json:"model"`
	Content      []anthropicText `json:"content"`
	StopReason   *string         `json:"stop_reason"`
	StopSequence *string         `json:"stop_sequence"`
	Usage        anthropicUsage  `json:"usage"`
}

func (anthropic) complete(m *respMeta, text []byte, reason string, completion int) []byte {
	stop := anthropicStopReason(reason)
	return mustJSON(anthropicMessage{
		ID: m.id, Type: "message", Role: "assistant", Model: m.model,
		Content:    []anthropicText{{Type: "text", Text: string(text)}},
		StopReason: &stop, Usage: newAnthropicUsage(m, completion),
	})
}

func (anthropic) truncated(m *respMeta) []byte {
	b := []byte(`{"id":`)
	b = appendJSONString(b, m.id)
	return append(b, `,"type":"message","role":"assistant","content":[{"type":"text","text":"tru`...)
}

func (anthropic) newStream(m *respMeta) streamRenderer { return &anthropicStream{m: m} }

type anthropicStream struct {
	m       *respMeta
	ev      namedEvents
	started bool // the answer's blocks have begun
	// msgStarted: message_start is out; thinking: a thinking block is open
	// (reasoning_render.go); next is the next content block's index.
	msgStarted, thinking bool
	next                 int
	text                 int // the text block's index
}

func (*anthropicStream) contentType() string { return "text/event-stream; charset=utf-8" }

// start writes nothing yet: message_start reports the cached input tokens,
// which the engine knows with the first token (the events go out together,
// as the OpenAI renderers' role chunk does).
func (*anthropicStream) start(eventSink) error { return nil }

// opening writes message_start (unless the thinking did), closes the
// thinking, and writes the text block's start and a ping, once.
func (a *anthropicStream) opening(out eventSink) error {
	if a.started {
		return nil
	}
	a.started = true
	if err := a.messageStart(out); err != nil {
		return err
	}
	if err := a.endThinking(out); err != nil {
		return err
	}
	a.text = a.next
	a.next++
	b := a.ev.typed("content_block_start")
	b = append(b, `,"index":`...)
	b = strconv.AppendInt(b, int64(a.text), 10)
	b = append(b, `,"content_block":{"type":"text","text":""}}`...)
	if err := out.event(a.ev.end(b), 0); err != nil {
		return err
	}
	return out.event(a.ev.end(append(a.ev.typed("ping"), '}')), 0)
}

// messageStart writes message_start, once: the message with no content yet
// and the input usage.
func (a *anthropicStream) messageStart(out eventSink) error {
	if a.msgStarted {
		return nil
	}
	a.msgStarted = true
	msg := anthropicMessage{
		ID: a.m.id, Type: "message", Role: "assistant", Model: a.m.model, Content: []anthropicText{},
		// output_tokens is a placeholder in message_start, as the real API sends.
		Usage: newAnthropicUsage(a.m, 1),
	}
	b := a.ev.typed("message_start")
	b = append(b, `,"message":`...)
	b = append(b, mustJSON(msg)...)
	return out.event(a.ev.end(append(b, '}')), 0)
}

func (a *anthropicStream) tokens(out eventSink, text []byte, n, _ int) error {
	if err := a.opening(out); err != nil {
		return err
	}
	b := a.ev.typed("content_block_delta")
	b = append(b, `,"index":`...)
	b = strconv.AppendInt(b, int64(a.text), 10)
	b = append(b, `,"delta":{"type":"text_delta","text":`...)
	b = appendJSONString(b, text)
	return out.event(a.ev.end(append(b, "}}"...)), n)
}

func (a *anthropicStream) finish(out eventSink, reason string, total int) error {
	if err := a.opening(out); err != nil {
		return err
	}
	b := a.ev.typed("content_block_stop")
	b = append(b, `,"index":`...)
	b = strconv.AppendInt(b, int64(a.text), 10)
	if err := out.event(a.ev.end(append(b, '}')), 0); err != nil {
		return err
	}
	return a.messageEnd(out, reason, total)
}

// messageEnd is a message's last two events, after its last content block:
// message_delta with the stop reason and the output count, then message_stop.
func (a *anthropicStream) messageEnd(out eventSink, reason string, total int) error {
	b := a.ev.typed("message_delta")
	b = append(b, `,"delta":{"stop_reason":"`...)
	b = append(b, anthropicStopReason(reason)...)
	b = append(b, `","stop_sequence":null},"usage":{"output_tokens":`...)
	b = strconv.AppendInt(b, int64(total), 10)
	if err := out.event(a.ev.end(append(b, "}}"...)), 0); err != nil {
		return err
	}
	return out.event(a.ev.end(append(a.ev.typed("message_stop"), '}')), 0)
}

// fail writes event: error; nothing follows it, as with the real API.
func (a *anthropicStream) fail(out eventSink, e *apiError, _ int) error {
	if err := a.opening(out); err != nil {
		return err
	}
	b := a.ev.typed("error")
	b = append(b, `,"error":`...)
	b = append(b, mustJSON(newAnthropicError(e))...)
	return out.event(a.ev.end(append(b, '}')), 0)
}

// malformed writes a text delta cut off inside its JSON.
func (a *anthropicStream) malformed(out eventSink) error {
	if err := a.opening(out); err != nil {
		return err
	}
	b := a.ev.typed("content_block_delta")
	b = append(b, `,"index":`...)
	b = strconv.AppendInt(b, int64(a.text), 10)
	b = append(b, `,"delta":{"type":"text_delta","text":"tru`...)
	return out.event(a.ev.end(b), 0)
}
