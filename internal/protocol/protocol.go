// Package protocol turns one provider's wire format into protocol-neutral deltas.
//
// A Spec says how to ask (path, headers, body flags) and how the answer is framed
// (SSE or NDJSON); a Decoder, made fresh for every call because some formats carry
// state between events (Anthropic content blocks, cumulative usage), turns each
// framed event into a Delta. Nothing here knows about k6 or about time: the caller
// timestamps events before it hands them over.
package protocol

import (
	"fmt"
	"maps"
	"net/http"
	"sort"
	"strings"
)

// Framing is how a response body is cut into events.
type Framing int

const (
	// FramingSSE is a WHATWG server-sent event stream.
	FramingSSE Framing = iota
	// FramingNDJSON is one JSON document per line (Ollama).
	FramingNDJSON
)

// Event is one framed unit of a response: an SSE event or an NDJSON line.
type Event struct {
	Type string // SSE "event:" field; empty for unnamed events and NDJSON
	ID   string // SSE last event id
	// Data is the payload. It may be borrowed from the reader's buffer:
	// valid during Decode only, so neither a decoder nor its caller keeps
	// it, or any part of it, without a copy.
	Data string
}

// Usage is a server's token accounting. Zero fields mean "not reported",
// except CachedTokens, whose zero is a reading (a cache miss) only when
// CachedReported says the server sent a cached-token field: a server that
// reports no cache use has not said its cache missed.
type Usage struct {
	PromptTokens     int64
	CompletionTokens int64
	CachedTokens     int64
	ReasoningTokens  int64
	TotalTokens      int64
	CachedReported   bool
}

// ToolCallDelta is a fragment of one tool call, keyed by Index (or ID).
type ToolCallDelta struct {
	Index int
	ID    string
	Name  string
	Args  string
}

// Signature kinds: which piece of an answer a server signed. Anthropic signs
// a thinking block (and sends redacted thinking as opaque data); Gemini puts
// a thoughtSignature on a thought, text or functionCall part; Responses'
// reasoning items go back whole (with encrypted_content when asked for).
const (
	SignedThinking = "thinking"          // Anthropic: the signature of the thinking block just read
	SignedRedacted = "redacted_thinking" // Anthropic: a redacted_thinking block's data
	SignedThought  = "thought"           // Gemini: a thought part's signature
	SignedText     = "text"              // Gemini: a text part's signature
	SignedCall     = "call"              // Gemini: a functionCall part's signature (Call is its index)
	SignedItem     = "item"              // Responses: a reasoning output item, whole (JSON: id, summary, encrypted_content)
)

// Signature is an opaque value a server wants back, verbatim, when its
// answer is sent back in a conversation's history: without it the server
// refuses the reasoning (or, on a tool-call turn, the whole request).
type Signature struct {
	Kind  string
	Call  int // the tool call's index, for SignedCall
	Value string
}

// StreamError is an error the server reported inside a successful HTTP stream.
type StreamError struct {
	Message string
	Code    string
}

// Delta is what one event contributed. The decoder fills it; the caller resets it.
type Delta struct {
	Text      string // answer output
	Reasoning string // reasoning ("thinking") output
	ToolCalls []ToolCallDelta
	// Signatures are the event's signed pieces (rare: nil on most events).
	Signatures []Signature
	// ResponseID is the id the server gave its answer, for a later request
	// to name (Responses' previous_response_id).
	ResponseID string

	// Usage is set when the event reports token usage. UsageCumulative says the
	// completion count is a running total that can be read per event (vLLM
	// continuous usage, Anthropic message_delta, Gemini usageMetadata).
	Usage           *Usage
	UsageCumulative bool
	// usage holds what Usage points to for decoders that read it into the
	// Delta (keepUsage): valid until the next Reset, as the rest.
	usage Usage

	FinishReason string
	// Choice is the index of the choice the event's pieces belong to (n > 1
	// asks for several answers, streamed interleaved; 0 otherwise). A chunk
	// carrying pieces of several choices is folded into the last one's.
	Choice int
	// Terminal says the server declared the answer complete (finish reason,
	// message_stop, response.completed, done:true), with or without naming
	// the finish (FinishReason may be empty: the finish is then unknown).
	Terminal bool
	// EndOfStream asks the reader to stop: nothing meaningful follows ([DONE]).
	// It is weaker evidence than Terminal (a gateway may send it after cutting
	// a stream); the call weighs it with what came before (stream.Call).
	EndOfStream bool

	Err           *StreamError
	ServerTimings map[string]float64 // milliseconds, by phase name
	Model         string             // the model the server says answered
	RequestID     string
}

// keepUsage makes u the event's usage, held in d (no allocation per
// usage report).
func (d *Delta) keepUsage(u Usage) {
	d.usage = u
	d.Usage = &d.usage
}

// Reset clears d for reuse without freeing its tool-call slice.
func (d *Delta) Reset() {
	tc := d.ToolCalls[:0]
	*d = Delta{ToolCalls: tc}
}

// HasOutput reports whether the event carried output (text, reasoning or
// tool-call content); role-only, empty and keep-alive events do not.
func (d *Delta) HasOutput() bool {
	if d.Text != "" || d.Reasoning != "" {
		return true
	}
	for i := range d.ToolCalls {
		if d.ToolCalls[i].Args != "" || d.ToolCalls[i].Name != "" {
			return true
		}
	}
	return false
}

// HasAnswer reports whether the event carried non-reasoning output.
func (d *Delta) HasAnswer() bool {
	if d.Text != "" {
		return true
	}
	for i := range d.ToolCalls {
		if d.ToolCalls[i].Args != "" || d.ToolCalls[i].Name != "" {
			return true
		}
	}
	return false
}

// Decoder turns events into deltas. An error means the event could not be
// understood (the call ends with a decode error).
type Decoder interface {
	Decode(ev Event, d *Delta) error
}

// Request is what a Spec needs to shape a call.
type Request struct {
	Model           string
	APIKey          string //nolint:gosec // carried, never printed
	ContinuousUsage bool
	// PromptOnly says the body is a bare-prompt completion (a "prompt" and no
	// "messages"); Ollama then uses /api/generate instead of /api/chat. Fill it
	// with PromptOnly(body) before calling Path.
	PromptOnly bool
}

// PromptOnly reports whether body asks for a bare-prompt completion rather than
// a chat: it has a "prompt" and no "messages".
func PromptOnly(body map[string]any) bool {
	_, prompt := body["prompt"]
	_, messages := body["messages"]
	return prompt && !messages
}

// Spec describes one protocol.
type Spec struct {
	Name    string
	Framing Framing
	// Path is the endpoint appended to the client's base URL.
	Path func(r Request) string
	// Prepare sets the streaming flags on the request body unless the caller set them.
	Prepare func(body map[string]any, r Request)
	// Headers adds authentication and protocol headers.
	Headers    func(h http.Header, r Request)
	NewDecoder func() Decoder
	// CompleteAtEOF says a clean end of the body completes the call even though
	// no event declared it complete: raw event streams have no terminal event.
	CompleteAtEOF bool
	// OutputLimitField is the dotted body field ("options.num_predict") a
	// request sets for the answer's output limit ("": the protocol has none).
	OutputLimitField string
	// MaxTokens reads the output limit the request body sets (0 when it
	// sets none, or for protocols without one): an answer whose output count
	// reaches it and whose server named no finish ended at the limit. Left
	// nil, it reads OutputLimitField.
	MaxTokens func(body map[string]any) int64
	// LengthFinish is the protocol's own name for "stopped at the output
	// limit" ("length", "max_tokens"…), given to such an answer.
	LengthFinish string
}

var registry = map[string]*Spec{} //nolint:gochecknoglobals // filled by init, read-only after

// Register adds a protocol; it is called from init functions only.
func Register(s *Spec) {
	if s.MaxTokens == nil && s.OutputLimitField != "" {
		field := s.OutputLimitField
		s.MaxTokens = func(body map[string]any) int64 { return firstCount(body, field) }
	}
	if _, dup := registry[s.Name]; dup {
		panic("protocol registered twice: " + s.Name)
	}
	registry[s.Name] = s
}

// SetMaxTokens sets the answer's output limit n in body at OutputLimitField,
// unless body already sets one or the protocol has no such field. The
// objects on the field's path are copied before they are written, so an
// object body shares with its caller stays as it was; body itself is
// written.
func (s *Spec) SetMaxTokens(body map[string]any, n int64) {
	if n <= 0 || s.OutputLimitField == "" || s.MaxTokens(body) > 0 {
		return
	}
	keys := strings.Split(s.OutputLimitField, ".")
	m := body
	for _, k := range keys[:len(keys)-1] {
		sub := map[string]any{}
		if old, ok := m[k].(map[string]any); ok {
			maps.Copy(sub, old)
		}
		m[k] = sub
		m = sub
	}
	m[keys[len(keys)-1]] = n
}

// Lookup returns the protocol named name.
func Lookup(name string) (*Spec, error) {
	if s, ok := registry[name]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("unknown protocol %q (known: %s)", name, strings.Join(Names(), ", "))
}

// Names lists the registered protocols, sorted.
func Names() []string {
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// setDefault sets body[key] = v unless the caller set it.
func setDefault(body map[string]any, key string, v any) {
	if _, ok := body[key]; !ok {
		body[key] = v
	}
}

func bearer(h http.Header, r Request) {
	if r.APIKey != "" {
		h.Set("Authorization", "Bearer "+r.APIKey)
	}
}

// streamHeaders sets what every streamed call sends. Accept-Encoding: identity
// keeps proxies from compressing the stream: a compressor releases bytes only
// when it flushes, which batches events and destroys the inter-token timing.
func streamHeaders(h http.Header, accept string) {
	h.Set("Accept", accept)
	h.Set("Accept-Encoding", "identity")
}

// noPrepare is the Prepare of protocols whose body carries no streaming flag
// (the endpoint itself streams) or that must not be touched (sse).
func noPrepare(map[string]any, Request) {}
