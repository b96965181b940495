package sim

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
)

// llama.cpp's llama-server native completion: POST /completion. The stream
// is "data: {…}" events, one per engine step, each with its content, token
// ids and the running tokens_predicted; the last has stop:true, stop_type
// (limit or eos), empty content and a timings object built from the
// engine's phases (prompt_n counts the prompt tokens actually computed,
// cache_n those reused from the prefix cache). No [DONE].

func init() { registerRoute("/completion", llamaCpp{}) }

type llamaCpp struct{}

func (llamaCpp) name() string     { return "llamacpp" }
func (llamaCpp) idPrefix() string { return "" }

func (llamaCpp) parse(body []byte) (*genRequest, *apiError) {
	var req struct {
		Model    string          `json:"model"`
		Prompt   json.RawMessage `json:"prompt"`
		NPredict *int64          `json:"n_predict"`
		Stream   *bool           `json:"stream"`
		Seed     *int64          `json:"seed"`
	}
	if e := decodeBody(body, &req); e != nil {
		return nil, e
	}
	g := &genRequest{Model: req.Model, Stream: req.Stream != nil && *req.Stream, Seed: req.Seed}
	// n_predict -1 is "until the end": llm-sim uses the model's default.
	if np := req.NPredict; np != nil && *np != -1 {
		var e *apiError
		if g.MaxTokens, e = maxTokensField("n_predict", np); e != nil {
			return nil, e
		}
	}
	// A prompt is a string or token ids, as in the OpenAI completions route.
	if e := completionPrompt(bytes.TrimSpace(req.Prompt), g); e != nil {
		return nil, e
	}
	return g, nil
}

// errorBody is {"error": {"code", "message", "type"}}, as llama-server sends.
func (llamaCpp) errorBody(e *apiError) []byte {
	type inner struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Type    string `json:"type"`
	}
	typ := e.Type
	if typ == "" {
		typ = "server_error"
	}
	return mustJSON(map[string]inner{"error": {Code: e.Status, Message: e.Message, Type: typ}})
}

func llamaCppStopType(reason string) string {
	if reason == "length" {
		return "limit"
	}
	return "eos"
}

// llamaCppTimings is result_timings::to_json.
type llamaCppTimings struct {
	CacheN              int     `json:"cache_n"`
	PromptN             int     `json:"prompt_n"`
	PromptMs            float64 `json:"prompt_ms"`
	PromptPerTokenMs    float64 `json:"prompt_per_token_ms"`
	PromptPerSecond     float64 `json:"prompt_per_second"`
	PredictedN          int     `json:"predicted_n"`
	PredictedMs         float64 `json:"predicted_ms"`
	PredictedPerTokenMs float64 `json:"predicted_per_token_ms"`
	PredictedPerSecond  float64 `json:"predicted_per_second"`
}

func newLlamaCppTimings(m *respMeta, predicted int) llamaCppTimings {
	ph := &m.phases
	ms := func(from, to time.Time) float64 {
		if from.IsZero() || to.Before(from) {
			return 0
		}
		return float64(to.Sub(from)) / float64(time.Millisecond)
	}
	t := llamaCppTimings{
		CacheN: m.cachedTokens, PromptN: m.promptTokens - m.cachedTokens, PromptMs: ms(ph.PrefillStart, ph.PrefillEnd),
		PredictedN: predicted, PredictedMs: ms(ph.PrefillEnd, ph.LastToken),
	}
	rates := func(n int, total float64) (perToken, perSecond float64) {
		if n == 0 || total == 0 {
			return 0, 0
		}
		return total / float64(n), 1e3 * float64(n) / total
	}
	t.PromptPerTokenMs, t.PromptPerSecond = rates(t.PromptN, t.PromptMs)
	t.PredictedPerTokenMs, t.PredictedPerSecond = rates(t.PredictedN, t.PredictedMs)
	return t
}

// llamaCppFinal is the last event (or the whole non-streamed answer).
type llamaCppFinal struct {
	Index           int             `json:"index"`
	Content         string          `json:"content"`
	Tokens          []uint32        `json:"tokens"`
	IDSlot          int             `json:"id_slot"`
	Stop            bool            `json:"stop"`
	Model           string          `json:"model"`
	TokensPredicted int             `json:"tokens_predicted"`
	TokensEvaluated int             `json:"tokens_evaluated"`
	HasNewLine      bool            `json:"has_new_line"`
	Truncated       bool            `json:"truncated"`
	StopType        string          `json:"stop_type"`
	StoppingWord    string          `json:"stopping_word"`
	TokensCached    int             `json:"tokens_cached"`
	Timings         llamaCppTimings `json:"timings"`
}

func newLlamaCppFinal(m *respMeta, content, reason string, predicted int) llamaCppFinal {
	return llamaCppFinal{
		Content: content, Tokens: []uint32{}, Stop: true, Model: m.model,
		TokensPredicted: predicted, TokensEvaluated: m.promptTokens, StopType: llamaCppStopType(reason),
		// tokens_cached is n_past: the whole context, generated tokens included.
		TokensCached: m.promptTokens + predicted, Timings: newLlamaCppTimings(m, predicted),
	}
}

func (llamaCpp) complete(m *respMeta, text []byte, reason string, completion int) []byte {
	return mustJSON(newLlamaCppFinal(m, string(text), reason, completion))
}

func (llamaCpp) truncated(*respMeta) []byte { return []byte(`{"index":0,"content":"tru`) }

func (llamaCpp) newStream(m *respMeta) streamRenderer { return &llamaCppStream{m: m} }

type llamaCppStream struct {
	m   *respMeta
	buf []byte
}

func (*llamaCppStream) contentType() string { return "text/event-stream" }

// start writes nothing: the first event carries the first tokens.
func (*llamaCppStream) start(eventSink) error { return nil }

func (s *llamaCppStream) tokens(out eventSink, text []byte, n, total int) error {
	b := append(s.buf[:0], `data: {"index":0,"content":`...)
	b = appendJSONString(b, text)
	b = append(b, `,"tokens":[`...)
	ids := vocabIDOf()
	for i, w := range bytes.SplitAfter(text[min(1, len(text)):], []byte(" ")) {
		// text is " w1 w2…": split after each separating space, then put the
		// space back in front of each word.
		word := append([]byte{' '}, bytes.TrimSuffix(w, []byte(" "))...)
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, uint64(ids[string(word)]), 10)
	}
	b = append(b, `],"stop":false,"id_slot":0,"tokens_predicted":`...)
	b = strconv.AppendInt(b, int64(total), 10)
	b = append(b, `,"tokens_evaluated":`...)
	b = strconv.AppendInt(b, int64(s.m.promptTokens), 10)
	b = append(b, "}\n\n"...)
	s.buf = b
	return out.event(b, n)
}

func (s *llamaCppStream) finish(out eventSink, reason string, total int) error {
	b := append(s.buf[:0], "data: "...)
	b = append(b, mustJSON(newLlamaCppFinal(s.m, "", reason, total))...)
	s.buf = append(b, "\n\n"...)
	return out.event(s.buf, 0)
}

// fail writes data: {"error": {…}} (llama-server since Sept 2025).
func (s *llamaCppStream) fail(out eventSink, e *apiError, _ int) error {
	b := append(s.buf[:0], "data: "...)
	b = append(b, llamaCpp{}.errorBody(e)...)
	s.buf = append(b, "\n\n"...)
	return out.event(s.buf, 0)
}

func (s *llamaCppStream) malformed(out eventSink) error {
	s.buf = append(s.buf[:0], `data: {"index":0,"content":"tru`+"\n\n"...)
	return out.event(s.buf, 0)
}
