package sim

import (
	"encoding/json"
	"strings"
	"time"
)

// Ollama's native API: POST /api/chat (messages) and /api/generate (prompt).
// The stream is NDJSON (application/x-ndjson), not SSE: one JSON object per
// line, text in message.content (chat) or response (generate), and a last
// line with done:true, done_reason, the token counts and the engine's phases
// as *_duration in nanoseconds. Streaming is the default: "stream": false
// asks for one JSON answer.

func init() {
	registerRoute("/api/chat", ollama{})
	registerRoute("/api/generate", ollama{generate: true})
}

type ollama struct{ generate bool }

func (ollama) name() string     { return "ollama" }
func (ollama) idPrefix() string { return "" }

func (o ollama) parse(body []byte) (*genRequest, *apiError) {
	var req struct {
		Model    string          `json:"model"`
		Messages json.RawMessage `json:"messages"`
		Prompt   *string         `json:"prompt"`
		System   *string         `json:"system"`
		Stream   *bool           `json:"stream"`
		Options  struct {
			NumPredict *int64 `json:"num_predict"`
			Seed       *int64 `json:"seed"`
		} `json:"options"`
	}
	if e := decodeBody(body, &req); e != nil {
		return nil, e
	}
	g := &genRequest{Model: req.Model, Stream: req.Stream == nil || *req.Stream, Seed: req.Options.Seed}
	// num_predict -1 (no limit) and -2 (fill the context) leave the length to
	// the model; llm-sim uses its default.
	if np := req.Options.NumPredict; np != nil && *np != -1 && *np != -2 {
		var e *apiError
		if g.MaxTokens, e = maxTokensField("options.num_predict", np); e != nil {
			return nil, e
		}
	}
	var sb strings.Builder
	if o.generate {
		if req.Prompt == nil {
			return nil, badRequest("prompt", "prompt is required")
		}
		if req.System != nil {
			sb.WriteString(*req.System)
		}
		sb.WriteString(*req.Prompt)
	} else if e := appendMessagesText(&sb, req.Messages, "messages"); e != nil {
		return nil, e
	}
	g.Prompt = sb.String()
	return g, nil
}

// errorBody is Ollama's {"error": "…"}.
func (ollama) errorBody(e *apiError) []byte {
	return mustJSON(struct {
		Error string `json:"error"`
	}{e.Message})
}

// ollamaDoneReason maps the engine's finish reason.
func ollamaDoneReason(reason string) string {
	if reason == "length" {
		return "length"
	}
	return "stop"
}

// ollamaStats are the last line's counts and durations (ns). The engine's
// phases map as: load = waiting for a slot (Ollama measures the wait for a
// runner there), prompt_eval = prefill, eval = end of prefill to the last
// token, total = queued to done. prompt_eval_count is the whole prompt and
// prompt_eval_cached_count the part read from the cache, as Ollama reports
// them since it counts cache hits.
type ollamaStats struct {
	TotalDuration         int64 `json:"total_duration"`
	LoadDuration          int64 `json:"load_duration"`
	PromptEvalCount       int   `json:"prompt_eval_count"`
	PromptEvalCachedCount int   `json:"prompt_eval_cached_count,omitempty"`
	PromptEvalDuration    int64 `json:"prompt_eval_duration"`
	EvalCount             int   `json:"eval_count"`
	EvalDuration          int64 `json:"eval_duration"`
}

func newOllamaStats(m *respMeta, completion int) ollamaStats {
	ph := &m.phases
	d := func(from, to time.Time) int64 {
		if from.IsZero() || to.Before(from) {
			return 0
		}
		return int64(to.Sub(from))
	}
	end := ph.Done
	if ph.LastToken.After(end) {
		end = ph.LastToken
	}
	return ollamaStats{
		TotalDuration: d(ph.Enqueued, end), LoadDuration: d(ph.Enqueued, ph.Admitted),
		PromptEvalCount: m.promptTokens, PromptEvalCachedCount: m.cachedTokens,
		PromptEvalDuration: d(ph.PrefillStart, ph.PrefillEnd),
		EvalCount:          completion, EvalDuration: d(ph.PrefillEnd, ph.LastToken),
	}
}

// ollamaLine is a line of the stream (or the whole non-streamed answer).
type ollamaLine struct {
	Model     string         `json:"model"`
	CreatedAt string         `json:"created_at"`
	Message   *ollamaMessage `json:"message,omitempty"`
	Response  *string        `json:"response,omitempty"`
	Done      bool           `json:"done"`
	// The last line's members.
	DoneReason string `json:"done_reason,omitempty"`
	*ollamaStats
}

type ollamaMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

func (o ollama) line(m *respMeta, text string) ollamaLine {
	l := ollamaLine{Model: m.model, CreatedAt: time.Now().UTC().Format(time.RFC3339Nano)}
	if o.generate {
		l.Response = &text
	} else {
		l.Message = &ollamaMessage{Role: "assistant", Content: text}
	}
	return l
}

func (o ollama) last(m *respMeta, text, reason string, completion int) ollamaLine {
	l := o.line(m, text)
	l.Done, l.DoneReason = true, ollamaDoneReason(reason)
	st := newOllamaStats(m, completion)
	l.ollamaStats = &st
	return l
}

func (o ollama) complete(m *respMeta, text []byte, reason string, completion int) []byte {
	return mustJSON(o.last(m, string(text), reason, completion))
}

func (o ollama) truncated(m *respMeta) []byte {
	return o.cutLine(m)
}

// cutLine is a line cut off inside its text (the malformed fault).
func (o ollama) cutLine(m *respMeta) []byte {
	b := []byte(`{"model":`)
	b = appendJSONString(b, m.model)
	if o.generate {
		return append(b, `,"response":"tru`...)
	}
	return append(b, `,"message":{"role":"assistant","content":"tru`...)
}

func (o ollama) newStream(m *respMeta) streamRenderer { return &ollamaStream{o: o, m: m} }

type ollamaStream struct {
	o   ollama
	m   *respMeta
	buf []byte
}

func (*ollamaStream) contentType() string { return "application/x-ndjson" }

// start writes nothing: the first line carries the first tokens.
func (*ollamaStream) start(eventSink) error { return nil }

// write frames one line; a token line is built by hand (it is the hot path).
func (s *ollamaStream) write(out eventSink, v any, tokens int) error {
	s.buf = append(append(s.buf[:0], mustJSON(v)...), '\n')
	return out.event(s.buf, tokens)
}

func (s *ollamaStream) tokens(out eventSink, text []byte, n, _ int) error {
	b := append(s.buf[:0], `{"model":`...)
	b = appendJSONString(b, s.m.model)
	b = append(b, `,"created_at":"`...)
	b = time.Now().UTC().AppendFormat(b, time.RFC3339Nano)
	if s.o.generate {
		b = append(b, `","response":`...)
		b = appendJSONString(b, text)
	} else {
		b = append(b, `","message":{"role":"assistant","content":`...)
		b = appendJSONString(b, text)
		b = append(b, '}')
	}
	b = append(b, `,"done":false}`+"\n"...)
	s.buf = b
	return out.event(b, n)
}

func (s *ollamaStream) finish(out eventSink, reason string, total int) error {
	return s.write(out, s.o.last(s.m, "", reason, total), 0)
}

// fail writes {"error": "…"} as a line of its own while the status stays 200.
func (s *ollamaStream) fail(out eventSink, e *apiError, _ int) error {
	return s.write(out, json.RawMessage(s.o.errorBody(e)), 0)
}

func (s *ollamaStream) malformed(out eventSink) error {
	s.buf = append(append(s.buf[:0], s.o.cutLine(s.m)...), '\n')
	return out.event(s.buf, 0)
}
