package sim

import (
	"strconv"
	"sync"
)

// Hugging Face TGI's native API: POST /generate_stream (always streamed) and
// POST /generate (one answer). The stream is axum SSE, "data:" with no
// space, one event per generated token (a multi-token engine step is split
// into its tokens, as TGI does with speculative decoding). The last token's
// event carries generated_text and, when parameters.details is true, details
// with the finish reason and the counts. A natural stop ends on the EOS
// token, which is generated and counted but special, so it is not text.
// No [DONE].

func init() {
	registerRoute("/generate_stream", tgi{stream: true})
	registerRoute("/generate", tgi{})
}

type tgi struct{ stream bool }

func (tgi) name() string     { return "tgi" }
func (tgi) idPrefix() string { return "" }

// tgiEOS is the special token a natural stop ends on.
const (
	tgiEOSText = "<|endoftext|>"
	tgiEOSID   = 199999
)

func (t tgi) parse(body []byte) (*genRequest, *apiError) {
	var req struct {
		Inputs     *string `json:"inputs"`
		Parameters struct {
			MaxNewTokens *int64 `json:"max_new_tokens"`
			Details      *bool  `json:"details"`
			Seed         *int64 `json:"seed"`
		} `json:"parameters"`
	}
	if e := decodeBody(body, &req); e != nil {
		return nil, e
	}
	if req.Inputs == nil {
		return nil, badRequest("inputs", "missing field `inputs`")
	}
	// details:true is TGI's way to ask for the final counts; it rides on the
	// generic "final usage" flag.
	g := &genRequest{
		Prompt: *req.Inputs, Stream: t.stream, Seed: req.Parameters.Seed,
		IncludeUsage: req.Parameters.Details != nil && *req.Parameters.Details,
	}
	var e *apiError
	if g.MaxTokens, e = maxTokensField("parameters.max_new_tokens", req.Parameters.MaxNewTokens); e != nil {
		return nil, e
	}
	return g, nil
}

// tgiErrorType is TGI's error_type for an HTTP status.
func tgiErrorType(status int) string {
	switch {
	case status == 429 || status == 503:
		return "overloaded"
	case status >= 500:
		return "generation"
	}
	return "validation"
}

// errorBody is {"error": "…", "error_type": "…"}.
func (tgi) errorBody(e *apiError) []byte {
	return mustJSON(struct {
		Error     string `json:"error"`
		ErrorType string `json:"error_type"`
	}{e.Message, tgiErrorType(e.Status)})
}

func tgiFinishReason(reason string) string {
	if reason == "length" {
		return "length"
	}
	return "eos_token"
}

// appendTGIDetails appends the details object of the last token.
func appendTGIDetails(b []byte, m *respMeta, generated int) []byte {
	b = append(b, `{"finish_reason":"`...)
	b = append(b, tgiFinishReason(m.finishReason)...)
	b = append(b, `","generated_tokens":`...)
	b = strconv.AppendInt(b, int64(generated), 10)
	b = append(b, `,"seed":null,"input_length":`...)
	b = strconv.AppendInt(b, int64(m.promptTokens), 10)
	return append(b, '}')
}

// tgiAnswerText drops the final word of a natural stop: that token is the EOS.
func tgiAnswerText(m *respMeta, text []byte) []byte {
	if m.finishReason == "length" || len(text) == 0 {
		return text
	}
	last := len(text) - 1
	for last > 0 && text[last] != ' ' {
		last--
	}
	return text[:last]
}

func (tgi) complete(m *respMeta, text []byte, _ string, completion int) []byte {
	b := []byte(`{"generated_text":`)
	b = appendJSONString(b, tgiAnswerText(m, text))
	if m.includeUsage {
		b = append(b, `,"details":`...)
		b = appendTGIDetails(b, m, completion)
	}
	return append(b, '}')
}

func (tgi) truncated(*respMeta) []byte { return []byte(`{"generated_text":"tru`) }

func (tgi) newStream(m *respMeta) streamRenderer { return &tgiStream{m: m} }

type tgiStream struct {
	m    *respMeta
	buf  []byte
	text []byte // the answer so far, for generated_text
}

func (*tgiStream) contentType() string { return "text/event-stream" }

// start writes nothing: TGI's first event is the first token.
func (*tgiStream) start(eventSink) error { return nil }

// vocabIDOf maps each vocabulary word to its token id.
var vocabIDOf = sync.OnceValue(func() map[string]uint32 { //nolint:gochecknoglobals // computed once
	ids := vocabIDs()
	out := make(map[string]uint32, len(vocab))
	for i, w := range vocab {
		out[w] = ids[i]
	}
	return out
})

// tokens writes one event per token of the step.
func (s *tgiStream) tokens(out eventSink, text []byte, n, total int) error {
	return eachToken(text, n, func(i int, token []byte) error { return s.token(out, token, total-n+i+1) })
}

// token writes the index-th token (from 1); the planned last one ends the answer.
func (s *tgiStream) token(out eventSink, word []byte, index int) error {
	last := index == s.m.outputTokens
	eos := last && s.m.finishReason != "length"
	b := append(s.buf[:0], `data:{"index":`...)
	b = strconv.AppendInt(b, int64(index), 10)
	b = append(b, `,"token":{"id":`...)
	if eos {
		b = strconv.AppendInt(b, tgiEOSID, 10)
		b = append(b, `,"text":"`+tgiEOSText+`","logprob":-0.01,"special":true}`...)
	} else {
		b = strconv.AppendInt(b, int64(vocabIDOf()[string(word)]), 10)
		b = append(b, `,"text":`...)
		b = appendJSONString(b, word)
		b = append(b, `,"logprob":-0.25,"special":false}`...)
		s.text = append(s.text, word...)
	}
	if last {
		b = append(b, `,"generated_text":`...)
		b = appendJSONString(b, s.text)
		b = append(b, `,"details":`...)
		if s.m.includeUsage {
			b = appendTGIDetails(b, s.m, index)
		} else {
			b = append(b, "null"...)
		}
		b = append(b, "}\n\n"...)
	} else {
		b = append(b, `,"generated_text":null,"details":null}`+"\n\n"...)
	}
	s.buf = b
	return out.event(b, 1)
}

// finish writes nothing: the last token's event ended the answer.
func (*tgiStream) finish(eventSink, string, int) error { return nil }

func (s *tgiStream) fail(out eventSink, e *apiError, _ int) error {
	b := append(s.buf[:0], "data:"...)
	b = append(b, tgi{}.errorBody(e)...)
	s.buf = append(b, "\n\n"...)
	return out.event(s.buf, 0)
}

func (s *tgiStream) malformed(out eventSink) error {
	s.buf = append(s.buf[:0], `data:{"index":0,"token":{"id":0,"text":"tru`+"\n\n"...)
	return out.event(s.buf, 0)
}
