package sim

import (
	"encoding/json"
	"io"
	"os"
	"strconv"
	"sync"
)

// TraceRecord is the ground truth of one generation request: one JSON line
// in the --trace file. Times are Unix nanoseconds, taken on the monotonic
// clock from one wall-clock reading at start (unixNano); 0 means the request
// never reached that phase.
type TraceRecord struct {
	RequestID string `json:"request_id"`
	Model     string `json:"model"`
	Endpoint  string `json:"endpoint"`
	Stream    bool   `json:"stream"`
	Status    int    `json:"status"`
	// Conn numbers the connection the request came on (1-based, in accept
	// order) and ConnRequest is its ordinal there: 1 means the request opened
	// the connection (a TCP and, with TLS, a handshake in its time). Proto is
	// HTTP/1.1 or HTTP/2.0.
	Conn        uint64 `json:"conn"`
	ConnRequest int64  `json:"conn_request"`
	Proto       string `json:"proto"`

	ArrivalNS      int64 `json:"arrival_ns"`       // request received: its bytes' kernel receive stamp (StampReceives), else when the handler began
	HeadersNS      int64 `json:"headers_ns"`       // response headers sent
	EnqueuedNS     int64 `json:"enqueued_ns"`      // handed to the engine's waiting queue
	AdmittedNS     int64 `json:"admitted_ns"`      // given a running slot
	PrefillStartNS int64 `json:"prefill_start_ns"` // first prefill step began
	PrefillEndNS   int64 `json:"prefill_end_ns"`   // prefill done (the engine has the first token)
	FirstTokenNS   int64 `json:"first_token_ns"`   // first chunk carrying output sent
	// ChunksNS is when each event of the response was written and flushed
	// (taken just before the write, so never after the client could read it;
	// in gateway mode: when the block holding it was flushed); ChunkTokens
	// the output tokens in it; EmitNS when the engine produced it.
	ChunksNS    []int64 `json:"chunks_ns"`
	ChunkTokens []int   `json:"chunk_tokens"`
	EmitNS      []int64 `json:"emit_ns"`
	DoneNS      int64   `json:"done_ns"` // the last write returned (or the request failed)

	PromptTokens     int     `json:"prompt_tokens"`
	CachedTokens     int     `json:"cached_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	MaxTokens        int     `json:"max_tokens"`
	FinishReason     string  `json:"finish_reason,omitempty"`
	Outcome          Outcome `json:"outcome"`
	Fault            string  `json:"fault"`
	Error            string  `json:"error,omitempty"`

	// Op is "embed" or "rerank" for those routes ("" for generation);
	// Inputs their batch: the inputs embedded or the documents scored, each
	// one sequence of the engine (PromptTokens is their sum).
	Op     string `json:"op,omitempty"`
	Inputs int    `json:"inputs,omitempty"`
	// Images a generation prompt carried, their encoded bytes and the
	// prompt tokens they cost (in PromptTokens).
	Images      int `json:"images,omitempty"`
	ImageBytes  int `json:"image_bytes,omitempty"`
	ImageTokens int `json:"image_tokens,omitempty"`

	// Reasoning is the reasoning llm-sim streamed before the answer, and
	// Signatures what it signed it with (thinking signature, redacted data,
	// thoughtSignature, encrypted_content), in stream order (reasoning.go).
	Reasoning  string   `json:"reasoning,omitempty"`
	Signatures []string `json:"signatures,omitempty"`

	// Body and Headers are what the client sent, with trace_bodies
	// (trace_bodies.go).
	Body    json.RawMessage   `json:"body,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// ServerTiming renders the phases as a Server-Timing value (ms):
// queue (enqueued→admitted), prefill (prefill start→end), decode (prefill
// end→last token out of the engine) and total (arrival→done).
func (r *TraceRecord) ServerTiming(lastTokenNS int64) string {
	b := make([]byte, 0, 96)
	add := func(name string, from, to int64) {
		d := 0.0
		if from > 0 && to > from {
			d = float64(to-from) / 1e6
		}
		if len(b) > 0 {
			b = append(b, ", "...)
		}
		b = append(b, name...)
		b = append(b, ";dur="...)
		b = strconv.AppendFloat(b, d, 'f', 3, 64)
	}
	add("queue", r.EnqueuedNS, r.AdmittedNS)
	add("prefill", r.PrefillStartNS, r.PrefillEndNS)
	add("decode", r.PrefillEndNS, lastTokenNS)
	add("total", r.ArrivalNS, r.DoneNS)
	return string(b)
}

// traceSink writes trace lines to a file and/or a writer, one write per line.
type traceSink struct {
	mu     sync.Mutex
	file   *os.File
	w      io.Writer
	closed bool
}

func openTrace(path string, w io.Writer) (*traceSink, error) {
	if path == "" && w == nil {
		return nil, nil //nolint:nilnil // no trace wanted
	}
	t := &traceSink{w: w}
	if path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644) // #nosec G302 G304 -- operator's path
		if err != nil {
			return nil, err
		}
		t.file = f
	}
	return t, nil
}

func (t *traceSink) write(r *TraceRecord) {
	line, err := json.Marshal(r)
	if err != nil {
		return
	}
	line = append(line, '\n')
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	if t.file != nil {
		_, _ = t.file.Write(line)
	}
	if t.w != nil {
		_, _ = t.w.Write(line)
	}
}

func (t *traceSink) close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	if t.file != nil {
		return t.file.Close()
	}
	return nil
}
