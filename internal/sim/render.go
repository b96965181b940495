package sim

import (
	"encoding/json"
	"net/http"
	"unicode/utf8"
)

// The engine produces token steps with their times; a protocol turns them
// into one wire format. Each protocol lives in its own render_*.go file and
// registers the routes it serves, so a new wire format is one file and one
// registerRoute call.

// genRequest is a generation request in no particular wire format.
type genRequest struct {
	Model           string
	Prompt          string   // the text whose tokens are the prompt
	PromptIDs       []uint32 // a prompt given as token ids (instead of Prompt)
	MaxTokens       int      // 0 = the model's default
	Stream          bool
	IncludeUsage    bool // final usage event
	ContinuousUsage bool // running usage on every event (vLLM continuous_usage_stats)
	Seed            *int64
	// IgnoreEOS asks for max_tokens tokens whatever the model would stop at
	// (vLLM's ignore_eos): the usual way to fix answer lengths in a test.
	IgnoreEOS bool
}

// respMeta is what every event of one response repeats.
type respMeta struct {
	id              string // response id, e.g. "chatcmpl-<request id>"
	model           string
	created         int64 // Unix seconds
	includeUsage    bool
	continuousUsage bool
	promptTokens    int
	cachedTokens    int
	quirks          quirks // the model's server quirks (quirks.go)
	// outputTokens and finishReason are the planned answer length and its
	// finish reason: a renderer whose last token event must say it is the
	// last (TGI) knows it when total reaches outputTokens.
	outputTokens int
	finishReason string
	// keep, when set (Responses), stores the answer's output items under
	// its id once it is complete, for a later previous_response_id.
	keep func(output []any)
	// phases is the engine's timeline, set before finish, fail or complete
	// (Ollama and llama.cpp report their durations in the body).
	phases seqTimeline
	// think is the answer's reasoning, streamed before its text or tool
	// calls (nil: none; reasoning.go).
	think *reasoningPlan
}

// reasoner is a stream that carries reasoning (reasoning_render.go): reason
// writes one step's reasoning tokens, before any of the answer's.
type reasoner interface {
	reason(out eventSink, text []byte, n, total int) error
}

// eventSink takes the framed events of a stream, one call per event; tokens
// is the number of output tokens the event carries.
type eventSink interface {
	event(b []byte, tokens int) error
}

// streamRenderer writes one streamed response. Calls come in this order:
// start, then tokens (and malformed) any number of times, then finish or fail.
type streamRenderer interface {
	contentType() string
	start(out eventSink) error
	// tokens writes one engine step's tokens; total counts the output so far.
	tokens(out eventSink, text []byte, n, total int) error
	finish(out eventSink, finishReason string, total int) error
	fail(out eventSink, e *apiError, total int) error
	// malformed writes an event whose data is not valid JSON (a fault).
	malformed(out eventSink) error
}

// protocol is one wire format.
type protocol interface {
	name() string
	// parse reads and validates a request body.
	parse(body []byte) (*genRequest, *apiError)
	// errorBody renders an error before streaming (HTTP status set by the caller).
	errorBody(e *apiError) []byte
	newStream(m *respMeta) streamRenderer
	// complete renders a whole non-streamed answer.
	complete(m *respMeta, text []byte, finishReason string, completionTokens int) []byte
	// truncated is a non-streamed body cut short (the malformed fault).
	truncated(m *respMeta) []byte
	// idPrefix prefixes the request id in response ids.
	idPrefix() string
}

var routes = map[string]protocol{} //nolint:gochecknoglobals // filled by init, read-only after

// registerRoute serves p at path (POST); called from init functions only.
func registerRoute(path string, p protocol) {
	if _, dup := routes[path]; dup {
		panic("llm-sim: route registered twice: " + path)
	}
	routes[path] = p
}

// apiError is an error answer; each protocol renders it in its own shape.
type apiError struct {
	Status  int
	Message string
	Type    string
	Param   string
	Code    string
}

func badRequest(param, msg string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Message: msg, Type: "invalid_request_error", Param: param}
}

// appendJSONString appends s as a JSON string (invalid UTF-8 becomes U+FFFD).
func appendJSONString[T string | []byte](dst []byte, s T) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, `\ufffd`...)
		} else if r == '\u2028' || r == '\u2029' {
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("llm-sim: " + err.Error()) // only fixed shapes are marshalled
	}
	return b
}
