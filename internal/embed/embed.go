// Package embed shapes and reads the non-streamed calls of retrieval:
// embeddings (texts in, one vector per text out) and rerank (a query and
// documents in, a relevance score per document out), in the wire formats of
// the servers that serve them. An API says how to ask (path, headers, body)
// and how to read the whole answer; the answer's vectors are counted, not
// kept, unless the caller asks for them, because a batch of float vectors is
// hundreds of kilobytes of JSON whose decoding would otherwise be charged to
// the server's latency (the caller times Parse on its own). Nothing here
// knows k6 or the clock.
package embed

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// Encodings an embeddings answer can carry its vectors in.
const (
	EncodingFloat  = "float"
	EncodingBase64 = "base64" // little-endian float32, base64 (OpenAI's encoding_format)
)

// Request is one embeddings call.
type Request struct {
	Model  string
	Inputs []string
	// Single says the caller gave one string, not a list: it is sent as one
	// where the API tells the two apart.
	Single bool
	// Encoding is EncodingFloat or EncodingBase64; "" sends none (the
	// server's default, float everywhere we know).
	Encoding   string
	Dimensions int // 0 = the model's own
	// Extra are more body fields (truncate, normalize, user…), sent as they
	// are; a field this package sets itself cannot be overridden here.
	Extra map[string]any
}

// Answer is what an embeddings answer said.
type Answer struct {
	Count     int // vectors returned
	Dimension int // their length (every vector has the same)
	// Vectors are the values, only when the caller asked to keep them.
	Vectors [][]float64
	// InputTokens is the server's count of the inputs' tokens; 0 when it
	// reported none (then the caller counts with a tokenizer).
	InputTokens int64
	Model       string
	// ServerTimings are the server's own durations in milliseconds, by
	// phase (Ollama's load, prefill and total).
	ServerTimings map[string]float64
}

// API is one embeddings wire format.
type API struct {
	Name string
	// Path is the endpoint appended to the client's base URL.
	Path func(r *Request) string
	// Headers adds authentication.
	Headers func(h http.Header, apiKey string)
	// Body renders the request; an option the API cannot carry is an error
	// naming it, never dropped.
	Body func(r *Request) ([]byte, error)
	// Parse reads a whole 2xx answer; keep asks for the vectors' values.
	Parse func(body []byte, keep bool) (*Answer, error)
}

var apis = map[string]*API{} //nolint:gochecknoglobals // filled by init, read-only after

func register(a *API) {
	if _, dup := apis[a.Name]; dup {
		panic("embed: API registered twice: " + a.Name)
	}
	apis[a.Name] = a
}

// Lookup returns the embeddings API named name.
func Lookup(name string) (*API, error) {
	if a, ok := apis[name]; ok {
		return a, nil
	}
	return nil, fmt.Errorf("unknown embeddings API %q (known: %s)", name, strings.Join(Names(), ", "))
}

// Names lists the embeddings APIs, sorted.
func Names() []string { return sortedKeys(apis) }

// ForProtocol is the embeddings API a client of chat protocol p uses unless
// it says otherwise: the server that speaks p serves embeddings that way.
// Anthropic has no embeddings endpoint: ok is false.
func ForProtocol(p string) (string, bool) {
	switch p {
	case "ollama":
		return "ollama", true
	case "gemini":
		return "gemini", true
	case "anthropic":
		return "", false
	default: // OpenAI's routes, also served by vLLM, SGLang, llama.cpp, TGI/TEI and Ollama under /v1
		return "openai", true
	}
}

// Validate checks what every API needs.
func (r *Request) Validate() error {
	if len(r.Inputs) == 0 {
		return errors.New("input: give a string or a non-empty array of strings")
	}
	if r.Single && len(r.Inputs) != 1 {
		return errors.New("input: a single input is one string")
	}
	switch r.Encoding {
	case "", EncodingFloat, EncodingBase64:
	default:
		return fmt.Errorf("encodingFormat %q: use %q or %q", r.Encoding, EncodingFloat, EncodingBase64)
	}
	if r.Dimensions < 0 {
		return fmt.Errorf("dimensions %d is negative", r.Dimensions)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func bearer(h http.Header, key string) {
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
}
