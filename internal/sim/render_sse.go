package sim

import (
	"net/http"
	"strconv"
)

// A raw event stream: GET or POST /v1/sim/events, for the client's 'sse'
// protocol (an EventSource-style feed, not an LLM API). Each output token is
// one event, "id: N" (tokens so far) and "data: <token>"; the stream ends by
// closing the body after the last token, with no terminal event. A request
// is the query (?max_tokens=&prompt=&model=&seed=) or, on POST, a JSON body
// with the same names.

func init() { registerRoute("/v1/sim/events", rawEvents{}) }

type rawEvents struct{}

func (rawEvents) name() string     { return "sse" }
func (rawEvents) idPrefix() string { return "" }
func (rawEvents) acceptsGET()      {}

func (rawEvents) parse(body []byte) (*genRequest, *apiError) {
	return rawEvents{}.parseRequest(&http.Request{}, body)
}

func (rawEvents) parseRequest(r *http.Request, body []byte) (*genRequest, *apiError) {
	var req struct {
		Model     string `json:"model"`
		Prompt    string `json:"prompt"`
		MaxTokens *int64 `json:"max_tokens"`
		Seed      *int64 `json:"seed"`
	}
	if len(body) > 0 {
		if e := decodeBody(body, &req); e != nil {
			return nil, e
		}
	}
	if r.URL != nil {
		q := r.URL.Query()
		num := func(name string, dst **int64) *apiError {
			v := q.Get(name)
			if v == "" {
				return nil
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return badRequest(name, name+" must be an integer, got "+strconv.Quote(v))
			}
			*dst = &n
			return nil
		}
		if e := num("max_tokens", &req.MaxTokens); e != nil {
			return nil, e
		}
		if e := num("seed", &req.Seed); e != nil {
			return nil, e
		}
		if v := q.Get("prompt"); v != "" {
			req.Prompt = v
		}
		if v := q.Get("model"); v != "" {
			req.Model = v
		}
	}
	g := &genRequest{Model: req.Model, Prompt: req.Prompt, Seed: req.Seed, Stream: true}
	var e *apiError
	if g.MaxTokens, e = maxTokensField("max_tokens", req.MaxTokens); e != nil {
		return nil, e
	}
	return g, nil
}

func (rawEvents) errorBody(e *apiError) []byte { return openAIErrorBody(e) }

// complete and truncated are never used: every request streams.
func (rawEvents) complete(*respMeta, []byte, string, int) []byte { return nil }
func (rawEvents) truncated(*respMeta) []byte                     { return nil }

func (rawEvents) newStream(*respMeta) streamRenderer { return &rawEventStream{} }

type rawEventStream struct{ buf []byte }

func (*rawEventStream) contentType() string   { return "text/event-stream" }
func (*rawEventStream) start(eventSink) error { return nil }

// tokens writes one event per token; text is n words, each with its leading
// space, which survives framing because SSE strips only the first space
// after "data:".
func (s *rawEventStream) tokens(out eventSink, text []byte, n, total int) error {
	return eachToken(text, n, func(i int, token []byte) error {
		b := append(s.buf[:0], "id: "...)
		b = strconv.AppendInt(b, int64(total-n+i+1), 10)
		b = append(b, "\ndata: "...)
		b = append(b, token...)
		s.buf = append(b, "\n\n"...)
		return out.event(s.buf, 1)
	})
}

// finish writes nothing: a raw stream ends by closing the body.
func (*rawEventStream) finish(eventSink, string, int) error { return nil }

// fail writes an "error" event, the convention the client reads as a failure.
func (s *rawEventStream) fail(out eventSink, e *apiError, _ int) error {
	s.buf = append(append(append(s.buf[:0], "event: error\ndata: "...), e.Message...), "\n\n"...)
	return out.event(s.buf, 0)
}

// malformed writes an event whose data is not UTF-8: raw data has no JSON to
// break, and text that is not UTF-8 is what a raw reader cannot accept.
func (s *rawEventStream) malformed(out eventSink) error {
	s.buf = append(s.buf[:0], "data: tru\xff\xfe\n\n"...)
	return out.event(s.buf, 0)
}
