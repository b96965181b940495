package sim

import (
	"encoding/json"
	"strconv"
	"strings"
)

// OpenAI Responses: POST /v1/responses. The stream is named events with an
// increasing sequence_number: response.created, response.in_progress, the
// message item and its output_text part opening, output_text.delta…, then
// the closing *.done events (which repeat the text) and a terminal event:
// response.completed, or response.incomplete with reason max_output_tokens
// when the limit cut the answer, as the real API does. Usage is only on the
// terminal event. No [DONE].

func init() { registerRoute("/v1/responses", openAIResponses{}) }

type openAIResponses struct{}

func (openAIResponses) name() string     { return "openai-responses" }
func (openAIResponses) idPrefix() string { return "resp_" }

func (openAIResponses) errorBody(e *apiError) []byte { return openAIErrorBody(e) }

func (openAIResponses) parse(body []byte) (*genRequest, *apiError) {
	var req struct {
		Model           string          `json:"model"`
		Input           json.RawMessage `json:"input"`
		Instructions    *string         `json:"instructions"`
		MaxOutputTokens *int64          `json:"max_output_tokens"`
		Stream          *bool           `json:"stream"`
	}
	if e := decodeBody(body, &req); e != nil {
		return nil, e
	}
	g := &genRequest{Model: req.Model, Stream: req.Stream != nil && *req.Stream}
	var e *apiError
	if g.MaxTokens, e = maxTokensField("max_output_tokens", req.MaxOutputTokens); e != nil {
		return nil, e
	}
	var sb strings.Builder
	if req.Instructions != nil {
		sb.WriteString(*req.Instructions)
	}
	if e := appendResponsesInput(&sb, req.Input); e != nil {
		return nil, e
	}
	g.Prompt = sb.String()
	return g, nil
}

// appendResponsesInput reads input: a string, or a list of items of which
// the messages ({role, content}) carry the prompt text.
func appendResponsesInput(sb *strings.Builder, raw json.RawMessage) *apiError {
	if len(raw) == 0 || string(raw) == "null" {
		return badRequest("input", "Missing required parameter: 'input'.")
	}
	if raw[0] == '"' {
		return appendContentText(sb, raw, "input")
	}
	var items []struct {
		Type    string          `json:"type"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &items); err != nil {
		return badRequest("input", "'input' must be a string or an array of input items")
	}
	for i, it := range items {
		if it.Type != "" && it.Type != "message" {
			continue // tool outputs, reasoning items: not prompt text here
		}
		if it.Role == "" {
			return badRequest(indexed("input", i)+".role", "Missing required parameter: '"+indexed("input", i)+".role'.")
		}
		if e := appendContentText(sb, it.Content, indexed("input", i)+".content"); e != nil {
			return e
		}
	}
	return nil
}

// responsesStatus is the terminal status and, when incomplete, its reason.
func responsesStatus(reason string) (status, incomplete string) {
	if reason == "length" {
		return "incomplete", "max_output_tokens"
	}
	return "completed", ""
}

type responsesUsage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
}

type responsesPart struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
}

type responsesItem struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Status  string          `json:"status"`
	Role    string          `json:"role"`
	Content []responsesPart `json:"content"`
}

type responsesIncomplete struct {
	Reason string `json:"reason"`
}

// responseObject is the Response object of the events and of a non-streamed answer.
type responseObject struct {
	ID                string               `json:"id"`
	Object            string               `json:"object"`
	CreatedAt         int64                `json:"created_at"`
	Status            string               `json:"status"`
	Error             any                  `json:"error"`
	IncompleteDetails *responsesIncomplete `json:"incomplete_details"`
	Model             string               `json:"model"`
	Output            []any                `json:"output"`
	Usage             *responsesUsage      `json:"usage"`
}

func newResponseObject(m *respMeta, status string) responseObject {
	return responseObject{ID: m.id, Object: "response", CreatedAt: m.created, Status: status, Model: m.model, Output: []any{}}
}

// messageID is the output message item's id, derived from the response's.
func messageID(m *respMeta) string { return "msg_" + strings.TrimPrefix(m.id, "resp_") }

// ended fills the object of a finished answer: its item, status and usage.
func (r *responseObject) ended(m *respMeta, text, reason string, completion int) {
	status, incomplete := responsesStatus(reason)
	r.Status = status
	if incomplete != "" {
		r.IncompleteDetails = &responsesIncomplete{Reason: incomplete}
	}
	r.Output = []any{messageItem(m, status, text)}
	u := &responsesUsage{InputTokens: m.promptTokens, OutputTokens: completion, TotalTokens: m.promptTokens + completion}
	u.InputTokensDetails.CachedTokens = m.cachedTokens
	if m.think != nil {
		u.OutputTokensDetails.ReasoningTokens = min(completion, m.think.tokens)
	}
	r.Usage = u
}

// messageItem is the answer's output message item.
func messageItem(m *respMeta, status, text string) responsesItem {
	return responsesItem{
		ID: messageID(m), Type: "message", Status: status, Role: "assistant",
		Content: []responsesPart{{Type: "output_text", Text: text, Annotations: []any{}}},
	}
}

func (openAIResponses) complete(m *respMeta, text []byte, reason string, completion int) []byte {
	r := newResponseObject(m, "")
	r.ended(m, string(text), reason, completion)
	keepAnswer(m, nil, string(text))
	return mustJSON(r)
}

func (openAIResponses) truncated(m *respMeta) []byte {
	b := []byte(`{"id":`)
	b = appendJSONString(b, m.id)
	return append(b, `,"object":"response","status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"tru`...)
}

func (openAIResponses) newStream(m *respMeta) streamRenderer { return &responsesStream{m: m} }

type responsesStream struct {
	m    *respMeta
	ev   namedEvents
	seq  int
	text []byte // the whole answer, repeated by the *.done events
	// reasoning: the reasoning item is open (reasoning_render.go); done is
	// it once closed; items is the output index of the answer's first item.
	reasoning bool
	done      *reasoningItem
	items     int
	opened    bool // the message item is open
}

func (*responsesStream) contentType() string { return "text/event-stream; charset=utf-8" }

// typed starts an event with its type and sequence number.
func (r *responsesStream) typed(name string) []byte {
	b := r.ev.typed(name)
	b = append(b, `,"sequence_number":`...)
	b = strconv.AppendInt(b, int64(r.seq), 10)
	r.seq++
	return b
}

// emit writes an event whose remaining members are the JSON object v's.
func (r *responsesStream) emit(out eventSink, name string, v any) error {
	b := r.typed(name)
	obj := mustJSON(v)
	b = append(b, ',')
	b = append(b, obj[1:]...) // v's members after "type" and "sequence_number"
	return out.event(r.ev.end(b), 0)
}

// itemRef are the members naming the message's text part.
type itemRef struct {
	ItemID       string `json:"item_id"`
	OutputIndex  int    `json:"output_index"`
	ContentIndex int    `json:"content_index"`
}

// start writes response.created and response.in_progress, then opens the
// message item, unless reasoning comes first (the message follows it).
func (r *responsesStream) start(out eventSink) error {
	resp := newResponseObject(r.m, "in_progress")
	for _, name := range []string{"response.created", "response.in_progress"} {
		if err := r.emit(out, name, struct {
			Response responseObject `json:"response"`
		}{resp}); err != nil {
			return err
		}
	}
	if r.m.think != nil {
		return nil
	}
	return r.openMessage(out)
}

// openMessage closes the reasoning, if any, and opens the message item and
// its output_text part, once.
func (r *responsesStream) openMessage(out eventSink) error {
	if r.opened {
		return nil
	}
	r.opened = true
	if err := r.endReasoning(out); err != nil {
		return err
	}
	if err := r.emit(out, "response.output_item.added", struct {
		OutputIndex int           `json:"output_index"`
		Item        responsesItem `json:"item"`
	}{r.items, responsesItem{ID: messageID(r.m), Type: "message", Status: "in_progress", Role: "assistant", Content: []responsesPart{}}}); err != nil {
		return err
	}
	return r.emit(out, "response.content_part.added", struct {
		itemRef
		Part responsesPart `json:"part"`
	}{itemRef{ItemID: messageID(r.m), OutputIndex: r.items}, responsesPart{Type: "output_text", Annotations: []any{}}})
}

func (r *responsesStream) tokens(out eventSink, text []byte, n, _ int) error {
	if err := r.openMessage(out); err != nil {
		return err
	}
	r.text = append(r.text, text...)
	b := r.typed("response.output_text.delta")
	b = append(b, `,"item_id":`...)
	b = appendJSONString(b, messageID(r.m))
	b = append(b, `,"output_index":`...)
	b = strconv.AppendInt(b, int64(r.items), 10)
	b = append(b, `,"content_index":0,"delta":`...)
	b = appendJSONString(b, text)
	b = append(b, `,"logprobs":[]}`...)
	return out.event(r.ev.end(b), n)
}

func (r *responsesStream) finish(out eventSink, reason string, total int) error {
	if err := r.openMessage(out); err != nil {
		return err
	}
	ref := itemRef{ItemID: messageID(r.m), OutputIndex: r.items}
	text := string(r.text)
	if err := r.emit(out, "response.output_text.done", struct {
		itemRef
		Text     string `json:"text"`
		Logprobs []any  `json:"logprobs"`
	}{ref, text, []any{}}); err != nil {
		return err
	}
	part := responsesPart{Type: "output_text", Text: text, Annotations: []any{}}
	if err := r.emit(out, "response.content_part.done", struct {
		itemRef
		Part responsesPart `json:"part"`
	}{ref, part}); err != nil {
		return err
	}
	resp := newResponseObject(r.m, "")
	resp.ended(r.m, text, reason, total)
	if err := r.emit(out, "response.output_item.done", struct {
		OutputIndex int           `json:"output_index"`
		Item        responsesItem `json:"item"`
	}{r.items, messageItem(r.m, resp.Status, text)}); err != nil {
		return err
	}
	if r.done != nil {
		resp.Output = append([]any{*r.done}, resp.Output...)
	}
	name := "response.completed"
	if resp.Status == "incomplete" {
		name = "response.incomplete"
	}
	keepAnswer(r.m, r.done, text)
	return r.emit(out, name, struct {
		Response responseObject `json:"response"`
	}{resp})
}

// keepAnswer stores a text answer for previous_response_id, as the input
// items a client would send back for it (its reasoning item first).
func keepAnswer(m *respMeta, reasoning *reasoningItem, text string) {
	if m.keep == nil {
		return
	}
	items := []any{map[string]string{"role": "assistant", "content": text}}
	if reasoning != nil {
		items = append([]any{*reasoning}, items...)
	}
	m.keep(items)
}

// fail writes an error event, then response.failed: the stream's end.
func (r *responsesStream) fail(out eventSink, e *apiError, _ int) error {
	code := e.Code
	if code == "" || code == "500" {
		code = "server_error"
	}
	if err := r.emit(out, "error", struct {
		Code    string  `json:"code"`
		Message string  `json:"message"`
		Param   *string `json:"param"`
	}{code, e.Message, nil}); err != nil {
		return err
	}
	resp := newResponseObject(r.m, "failed")
	resp.Error = struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}{code, e.Message}
	return r.emit(out, "response.failed", struct {
		Response responseObject `json:"response"`
	}{resp})
}

// malformed writes a text delta cut off inside its JSON.
func (r *responsesStream) malformed(out eventSink) error {
	b := r.typed("response.output_text.delta")
	b = append(b, `,"item_id":`...)
	b = appendJSONString(b, messageID(r.m))
	b = append(b, `,"output_index":`...)
	b = strconv.AppendInt(b, int64(r.items), 10)
	b = append(b, `,"content_index":0,"delta":"tru`...)
	return out.event(r.ev.end(b), 0)
}
