package sim

import (
	"net/http"
	"strconv"
	"strings"
)

// Google Gemini: POST /v1beta/models/{model}:streamGenerateContent?alt=sse
// (and :generateContent, not streamed). The model is in the path. Each event
// is a whole GenerateContentResponse framed with CRLF, as Google sends them;
// usageMetadata is cumulative on every event; the last event carries
// finishReason (STOP, or MAX_TOKENS when maxOutputTokens cut the answer) and
// an empty text part. No sentinel.

const geminiPrefix = "/v1beta/models/"

func init() { registerPrefixRoute(geminiPrefix, gemini{}) }

type gemini struct{}

func (gemini) name() string     { return "gemini" }
func (gemini) idPrefix() string { return "" }

// parse serves callers without the URL (none in the server); the model and
// the method come from the path.
func (g gemini) parse(body []byte) (*genRequest, *apiError) { return g.parseBody(body) }

func (g gemini) parseRequest(r *http.Request, body []byte) (*genRequest, *apiError) {
	model, method, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, geminiPrefix), ":")
	if !ok || strings.Contains(model, "/") {
		return nil, &apiError{Status: http.StatusNotFound, Message: "no route " + r.URL.Path + " in llm-sim: use " + geminiPrefix + "{model}:streamGenerateContent?alt=sse"}
	}
	var stream bool
	switch method {
	case "streamGenerateContent":
		// Without alt=sse Google streams one JSON array, which llm-sim does not.
		if r.URL.Query().Get("alt") != "sse" {
			return nil, badRequest("alt", "llm-sim streams Gemini as server-sent events only: add ?alt=sse")
		}
		stream = true
	case "generateContent":
	default:
		return nil, &apiError{Status: http.StatusNotFound, Message: "unknown method '" + method + "' in llm-sim: use streamGenerateContent or generateContent"}
	}
	req, e := g.parseBody(body)
	if e != nil {
		return nil, e
	}
	req.Model, req.Stream = model, stream
	return req, nil
}

// geminiParts is {parts: [{text}]}, the shape of contents and systemInstruction.
type geminiParts struct {
	Role  string `json:"role"`
	Parts []struct {
		Text *string `json:"text"`
	} `json:"parts"`
}

func (p *geminiParts) appendText(sb *strings.Builder) {
	for _, part := range p.Parts {
		if part.Text != nil {
			sb.WriteString(*part.Text)
		}
	}
}

// geminiConfig is generationConfig; the REST API takes snake_case names too.
type geminiConfig struct {
	MaxOutputTokens      *int64 `json:"maxOutputTokens"`
	MaxOutputTokensSnake *int64 `json:"max_output_tokens"`
	Seed                 *int64 `json:"seed"`
	CandidateCount       *int64 `json:"candidateCount"`
}

func (gemini) parseBody(body []byte) (*genRequest, *apiError) {
	var req struct {
		Contents          []geminiParts `json:"contents"`
		SystemInstruction *geminiParts  `json:"systemInstruction"`
		SystemSnake       *geminiParts  `json:"system_instruction"`
		Config            *geminiConfig `json:"generationConfig"`
		ConfigSnake       *geminiConfig `json:"generation_config"`
	}
	if e := decodeBody(body, &req); e != nil {
		return nil, e
	}
	if len(req.Contents) == 0 {
		return nil, badRequest("contents", "* GenerateContentRequest.contents: contents is not specified")
	}
	g := &genRequest{}
	cfg := req.Config
	if cfg == nil {
		cfg = req.ConfigSnake
	}
	if cfg != nil {
		mt, param := cfg.MaxOutputTokens, "generationConfig.maxOutputTokens"
		if mt == nil {
			mt = cfg.MaxOutputTokensSnake
		}
		var e *apiError
		if g.MaxTokens, e = maxTokensField(param, mt); e != nil {
			return nil, e
		}
		if cfg.CandidateCount != nil && *cfg.CandidateCount != 1 {
			return nil, badRequest("generationConfig.candidateCount", "llm-sim supports candidateCount = 1 only")
		}
		g.Seed = cfg.Seed
	}
	var sb strings.Builder
	sys := req.SystemInstruction
	if sys == nil {
		sys = req.SystemSnake
	}
	if sys != nil {
		sys.appendText(&sb)
	}
	for i := range req.Contents {
		req.Contents[i].appendText(&sb)
	}
	g.Prompt = sb.String()
	return g, nil
}

// geminiStatus is the google.rpc status name of an HTTP status.
func geminiStatus(code int) string {
	switch code {
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	case http.StatusGatewayTimeout:
		return "DEADLINE_EXCEEDED"
	}
	if code >= 500 {
		return "INTERNAL"
	}
	return "INVALID_ARGUMENT"
}

// errorBody is {"error": {"code", "message", "status"}}.
func (gemini) errorBody(e *apiError) []byte {
	type inner struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Status  string `json:"status"`
	}
	return mustJSON(map[string]inner{"error": {Code: e.Status, Message: e.Message, Status: geminiStatus(e.Status)}})
}

func geminiFinishReason(reason string) string {
	if reason == "length" {
		return "MAX_TOKENS"
	}
	return "STOP"
}

// appendGeminiResponse appends a GenerateContentResponse with one candidate
// holding text; finishReason is omitted when empty.
func appendGeminiResponse(b []byte, m *respMeta, text []byte, finishReason string, candidates int) []byte {
	b = append(b, `{"candidates":[{"content":{"parts":[{"text":`...)
	b = appendJSONString(b, text)
	b = append(b, '}')
	return appendGeminiTail(b, m, finishReason, candidates)
}

// appendGeminiTail closes a response begun with its candidate's parts: the
// role, finishReason and usageMetadata.
func appendGeminiTail(b []byte, m *respMeta, finishReason string, candidates int) []byte {
	b = append(b, `],"role":"model"}`...)
	if finishReason != "" {
		b = append(b, `,"finishReason":"`...)
		b = append(b, finishReason...)
		b = append(b, '"')
	}
	b = append(b, `,"index":0}],"usageMetadata":{"promptTokenCount":`...)
	b = strconv.AppendInt(b, int64(m.promptTokens), 10)
	output := candidates
	candidates, thoughts := geminiCounts(m, output)
	b = append(b, `,"candidatesTokenCount":`...)
	b = strconv.AppendInt(b, int64(candidates), 10)
	if thoughts > 0 {
		b = append(b, `,"thoughtsTokenCount":`...)
		b = strconv.AppendInt(b, int64(thoughts), 10)
	}
	b = append(b, `,"totalTokenCount":`...)
	b = strconv.AppendInt(b, int64(m.promptTokens+output), 10)
	if m.cachedTokens > 0 {
		// promptTokenCount includes the cached tokens, as Google counts them.
		b = append(b, `,"cachedContentTokenCount":`...)
		b = strconv.AppendInt(b, int64(m.cachedTokens), 10)
	}
	b = append(b, `},"modelVersion":`...)
	b = appendJSONString(b, m.model)
	b = append(b, `,"responseId":`...)
	b = appendJSONString(b, m.id)
	return append(b, '}')
}

func (gemini) complete(m *respMeta, text []byte, reason string, completion int) []byte {
	return appendGeminiResponse(nil, m, text, geminiFinishReason(reason), completion)
}

func (gemini) truncated(*respMeta) []byte {
	return []byte(`{"candidates":[{"content":{"parts":[{"text":"tru`)
}

func (gemini) newStream(m *respMeta) streamRenderer { return &geminiStream{m: m} }

type geminiStream struct {
	m   *respMeta
	buf []byte
}

func (*geminiStream) contentType() string { return "text/event-stream" }

// start writes nothing: the first event carries the first tokens.
func (*geminiStream) start(eventSink) error { return nil }

// frame wraps data as one CRLF-terminated SSE event.
func (s *geminiStream) frame(out eventSink, data func([]byte) []byte, tokens int) error {
	b := data(append(s.buf[:0], "data: "...))
	b = append(b, "\r\n\r\n"...)
	s.buf = b
	return out.event(b, tokens)
}

func (s *geminiStream) tokens(out eventSink, text []byte, n, total int) error {
	return s.frame(out, func(b []byte) []byte { return appendGeminiResponse(b, s.m, text, "", total) }, n)
}

// finish writes the finishing chunk: an empty text part, carrying the
// answer's thoughtSignature when it reasoned.
func (s *geminiStream) finish(out eventSink, reason string, total int) error {
	if s.m.think == nil {
		return s.frame(out, func(b []byte) []byte {
			return appendGeminiResponse(b, s.m, nil, geminiFinishReason(reason), total)
		}, 0)
	}
	sig := geminiSignature(s.m, "text")
	return s.frame(out, func(b []byte) []byte {
		b = append(b, `{"candidates":[{"content":{"parts":[{"text":"","thoughtSignature":`...)
		b = appendJSONString(b, sig)
		b = append(b, '}')
		return appendGeminiTail(b, s.m, geminiFinishReason(reason), total)
	}, 0)
}

// fail writes the Google error object as an event; nothing follows it.
func (s *geminiStream) fail(out eventSink, e *apiError, _ int) error {
	return s.frame(out, func(b []byte) []byte { return append(b, gemini{}.errorBody(e)...) }, 0)
}

func (s *geminiStream) malformed(out eventSink) error {
	return s.frame(out, func(b []byte) []byte { return append(b, gemini{}.truncated(s.m)...) }, 0)
}
