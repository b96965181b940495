package sim

import (
	"encoding/json"
	"strconv"
)

// Shared by the OpenAI chat and completions renderers: SSE framing, usage
// objects, error objects and the common request fields.

// maxOutputTokens bounds max_tokens (the engine buffers what a slow client
// has not read yet).
const maxOutputTokens = 1 << 20

// openAIErrorBody is {"error":{"message","type","param","code"}}.
func openAIErrorBody(e *apiError) []byte {
	type inner struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    any     `json:"code"`
	}
	in := inner{Message: e.Message, Type: e.Type}
	if e.Param != "" {
		in.Param = &e.Param
	}
	if e.Code != "" {
		in.Code = e.Code
	}
	return mustJSON(map[string]inner{"error": in})
}

// openAIRequest is the body of both OpenAI routes; each reads its own prompt
// field (messages or prompt).
type openAIRequest struct {
	Model               string `json:"model"`
	MaxTokens           *int64 `json:"max_tokens"`
	MaxCompletionTokens *int64 `json:"max_completion_tokens"`
	Stream              *bool  `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage         *bool `json:"include_usage"`
		ContinuousUsageStats *bool `json:"continuous_usage_stats"`
	} `json:"stream_options"`
	N         *int64          `json:"n"`
	IgnoreEOS *bool           `json:"ignore_eos"`
	Seed      *int64          `json:"seed"`
	Messages  json.RawMessage `json:"messages"`
	Prompt    json.RawMessage `json:"prompt"`
}

// parseOpenAI decodes and validates the shared fields; prompt reads the
// route's own prompt field into g.
func parseOpenAI(body []byte, prompt func(r *openAIRequest, g *genRequest) *apiError) (*genRequest, *apiError) {
	var req openAIRequest
	if e := parseOpenAIBody(body, &req); e != nil {
		return nil, e
	}
	g := &genRequest{}
	if e := req.fill(g); e != nil {
		return nil, e
	}
	if e := prompt(&req, g); e != nil {
		return nil, e
	}
	return g, nil
}

func parseOpenAIBody(body []byte, v any) *apiError {
	if len(body) == 0 {
		return badRequest("", "request body is empty: expected a JSON object")
	}
	if err := json.Unmarshal(body, v); err != nil {
		if ute, ok := err.(*json.UnmarshalTypeError); ok && ute.Field != "" { //nolint:errorlint // a direct result
			return badRequest(ute.Field, "invalid type for '"+ute.Field+"': expected "+ute.Type.String())
		}
		return badRequest("", "invalid JSON body: "+err.Error())
	}
	return nil
}

// fill copies the common fields into g and validates them.
func (c *openAIRequest) fill(g *genRequest) *apiError {
	g.Model = c.Model
	mt := c.MaxTokens
	param := "max_tokens"
	if c.MaxCompletionTokens != nil {
		mt, param = c.MaxCompletionTokens, "max_completion_tokens"
	}
	if mt != nil {
		if *mt < 1 {
			return badRequest(param, param+" must be at least 1, got "+strconv.FormatInt(*mt, 10))
		}
		if *mt > maxOutputTokens {
			return badRequest(param, param+" must be at most "+strconv.Itoa(maxOutputTokens)+" in llm-sim")
		}
		g.MaxTokens = int(*mt)
	}
	if c.N != nil && *c.N != 1 {
		return badRequest("n", "llm-sim supports n = 1 only")
	}
	g.Stream = c.Stream != nil && *c.Stream
	if so := c.StreamOptions; so != nil {
		if !g.Stream {
			return badRequest("stream_options", "stream_options is only allowed when stream is true")
		}
		g.IncludeUsage = so.IncludeUsage != nil && *so.IncludeUsage
		// As in vLLM: continuous usage only comes with include_usage.
		g.ContinuousUsage = g.IncludeUsage && so.ContinuousUsageStats != nil && *so.ContinuousUsageStats
	}
	g.Seed = c.Seed
	g.IgnoreEOS = c.IgnoreEOS != nil && *c.IgnoreEOS
	return nil
}

// openAIChunks renders the chunk envelope shared by chat and completions;
// choice shapes differ and come from the caller.
type openAIChunks struct {
	m      *respMeta
	prefix []byte // `data: {"id":…,"object":…,"created":…,"model":…,"choices":[`
	buf    []byte
}

func newOpenAIChunks(m *respMeta, object string) openAIChunks {
	p := []byte(`data: {"id":`)
	p = appendJSONString(p, m.id)
	p = append(p, `,"object":"`...)
	p = append(p, object...)
	p = append(p, `","created":`...)
	p = strconv.AppendInt(p, m.created, 10)
	p = append(p, `,"model":`...)
	p = appendJSONString(p, m.model)
	p = append(p, `,"choices":[`...)
	return openAIChunks{m: m, prefix: p}
}

func (c *openAIChunks) contentType() string { return "text/event-stream; charset=utf-8" }

// begin starts a chunk; the caller appends its choice, then calls end.
func (c *openAIChunks) begin() []byte {
	c.buf = append(c.buf[:0], c.prefix...)
	return c.buf
}

// end closes the choices array, adds the usage member and frames the event.
// usage < 0 forces "usage": null even with continuous usage.
func (c *openAIChunks) end(b []byte, total int) []byte {
	b = append(b, ']')
	switch {
	case c.m.continuousUsage:
		b = append(b, `,"usage":`...)
		b = appendUsage(b, c.m, total)
	case c.m.includeUsage:
		b = append(b, `,"usage":null`...)
	}
	b = append(b, "}\n\n"...)
	c.buf = b
	return b
}

func appendUsage(b []byte, m *respMeta, completion int) []byte {
	b = append(b, `{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(m.promptTokens), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(completion), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(m.promptTokens+completion), 10)
	b = appendReasoningUsage(b, m, completion)
	b = m.quirks.appendCachedTokens(b, m.cachedTokens)
	return append(b, '}')
}

// finishChunk writes the chunk naming the finish, b (a choice begun with
// begin), unless the omit_finish_reason quirk leaves it out, then the tail.
func (c *openAIChunks) finishChunk(out eventSink, b []byte, total int) error {
	if !c.m.quirks.omitFinish {
		if err := out.event(c.end(b, total), 0); err != nil {
			return err
		}
	}
	return c.tail(out, total)
}

// tail writes what follows the finish chunk: the usage chunk and [DONE].
func (c *openAIChunks) tail(out eventSink, total int) error {
	if c.m.includeUsage {
		b := append(c.buf[:0], c.prefix...)
		b = append(b, `],"usage":`...)
		b = appendUsage(b, c.m, total)
		b = append(b, "}\n\n"...)
		c.buf = b
		if err := out.event(b, 0); err != nil {
			return err
		}
	}
	return out.event([]byte("data: [DONE]\n\n"), 0)
}

// fail writes an OpenAI error object as a data event, then [DONE] (as vLLM does).
func (c *openAIChunks) fail(out eventSink, e *apiError, _ int) error {
	b := append(c.buf[:0], "data: "...)
	b = append(b, openAIErrorBody(e)...)
	b = append(b, "\n\n"...)
	c.buf = b
	if err := out.event(b, 0); err != nil {
		return err
	}
	return out.event([]byte("data: [DONE]\n\n"), 0)
}

// malformed writes a chunk cut off in the middle of its JSON.
func (c *openAIChunks) malformed(out eventSink) error {
	b := append(c.buf[:0], c.prefix...)
	b = append(b, `{"index":0,"delta":{"content":"tru`...)
	b = append(b, "\n\n"...)
	c.buf = b
	return out.event(b, 0)
}

func finishReasonJSON(b []byte, reason string) []byte {
	if reason == "" {
		return append(b, "null"...)
	}
	return appendJSONString(b, reason)
}

// openAIAnswer renders a non-streamed answer with its one choice; its usage
// object is the stream's, quirks included.
func openAIAnswer(m *respMeta, object string, choice any, completion int) []byte {
	return mustJSON(struct {
		ID      string          `json:"id"`
		Object  string          `json:"object"`
		Created int64           `json:"created"`
		Model   string          `json:"model"`
		Choices []any           `json:"choices"`
		Usage   json.RawMessage `json:"usage"`
	}{ID: m.id, Object: object, Created: m.created, Model: m.model, Choices: []any{choice}, Usage: appendUsage(nil, m, completion)})
}

// openAITruncated is a non-streamed answer cut off inside its choice (the
// malformed fault).
func openAITruncated(m *respMeta, object, choiceStart string) []byte {
	b := []byte(`{"id":`)
	b = appendJSONString(b, m.id)
	b = append(b, `,"object":"`...)
	b = append(b, object...)
	b = append(b, `","choices":[`...)
	return append(b, choiceStart...)
}
