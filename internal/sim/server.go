// Package sim is llm-sim: an OpenAI-compatible server whose timing comes from
// an explicit model of a continuous-batching inference engine (running slots,
// a waiting queue, prefill and decode steps, a prefix cache), with faults on
// demand and a ground-truth trace of what every request went through.
//
// The engine (engine.go) produces token steps with their times; renderers
// (render_*.go) write them in a wire format; the Server ties both to HTTP.
package sim

import (
	crand "crypto/rand"
	"encoding/hex"
	"fmt"
	"log"
	"math/rand/v2"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/tokenizer"
)

// Server is a running simulator: one engine per model behind an http.Handler.
type Server struct {
	cfg    Config
	clock  Clock
	tok    *tokenizer.Tokenizer
	models map[string]*model
	order  []*model
	trace  *traceSink

	idPrefix string
	idSeq    atomic.Uint64
	outcomes outcomeCounts
	requests requestMetrics // vLLM's per-request counters and histograms
	stored   responseStore  // Responses answers for previous_response_id (responses_store.go)
	connSeq  atomic.Uint64  // connections accepted (HTTPServer)
	connOpen atomic.Int64   // connections open now

	mu       sync.Mutex
	closing  bool
	inflight sync.WaitGroup
	done     chan struct{}
	closeMu  sync.Mutex
	closed   bool
}

type model struct {
	name    string
	p       ModelProfile
	eng     *engine
	faults  *faultDraw
	rngMu   sync.Mutex
	rng     *rand.Rand
	created int64
}

// New validates cfg, opens the trace and starts one engine per model.
func New(cfg Config) (*Server, error) { return newServer(cfg, RealClock{}) }

func newServer(cfg Config, clock Clock) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	tok, err := tokenizer.Get(cfg.Tokenizer)
	if err != nil {
		return nil, err
	}
	trace, err := openTrace(cfg.Trace, cfg.TraceWriter)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	var pre [4]byte
	_, _ = crand.Read(pre[:])
	s := &Server{
		cfg: cfg, clock: clock, tok: tok, trace: trace,
		models: map[string]*model{}, idPrefix: hex.EncodeToString(pre[:]), done: make(chan struct{}),
	}
	created := time.Now().Unix()
	for _, mc := range cfg.Models {
		fd, err := newFaultDraw(mc.Faults)
		if err != nil {
			return nil, fmt.Errorf("model %q: %w", mc.Name, err)
		}
		m := &model{
			name: mc.Name, p: mc.ModelProfile, faults: fd, created: created,
			eng: newEngine(mc.Name, mc.ModelProfile, clock),
			rng: rand.New(rand.NewPCG(cfg.Seed, hashString(0, mc.Name))), // #nosec G404 -- simulation, not crypto
		}
		s.models[m.name] = m
		s.order = append(s.order, m)
	}
	_ = vocabIDs() // load the tokenizer's tables now, not on the first request
	for _, m := range s.order {
		m.eng.start()
	}
	return s, nil
}

// Models lists the served model names, the default first.
func (s *Server) Models() []string {
	out := make([]string, len(s.order))
	for i, m := range s.order {
		out[i] = m.name
	}
	return out
}

// Close stops the engines (requests in flight end with a "shutdown" error),
// waits a little for their handlers to write their trace lines, and closes
// the trace. It is safe to call twice.
func (s *Server) Close() error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	close(s.done)
	for _, m := range s.order {
		m.eng.close()
	}
	idle := make(chan struct{})
	go func() { s.inflight.Wait(); close(idle) }()
	select {
	case <-idle:
	case <-time.After(5 * time.Second):
	}
	if s.trace != nil {
		return s.trace.close()
	}
	return nil
}

// Handler serves the simulator's endpoints.
func (s *Server) Handler() http.Handler { return s }

// ServeHTTP routes a request. Every response carries X-Request-Id; a panic is
// logged and answered with a 500, and the server goes on.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := s.requestID(r)
	w.Header().Set("X-Request-Id", id)
	defer func() {
		if rec := recover(); rec != nil {
			if rec == http.ErrAbortHandler { //nolint:errorlint,err113 // sentinel compared as net/http does
				panic(rec)
			}
			log.Printf("llm-sim: panic serving %s %s: %v\n%s", r.Method, r.URL.Path, rec, debug.Stack()) // #nosec G706 -- llm-sim is a test server: it logs what the load generator sent
			writeJSONError(w, openAIChat{}, &apiError{Status: http.StatusInternalServerError, Message: "internal error in llm-sim", Type: "server_error"})
		}
	}()
	if rt, ok := lookupRetrieval(r.URL.Path); ok { // embeddings and rerank (retrieval_serve.go)
		s.serveRetrieval(w, r, rt, id)
		return
	}
	if p, ok := lookupRoute(r.URL.Path); ok {
		if !allowsMethod(p, r.Method) {
			w.Header().Set("Allow", allowHeader(p))
			writeJSONError(w, p, &apiError{Status: http.StatusMethodNotAllowed, Message: r.Method + " is not allowed on " + r.URL.Path + ": use " + allowHeader(p), Type: "invalid_request_error"})
			return
		}
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			writeJSONError(w, p, &apiError{Status: http.StatusServiceUnavailable, Message: "llm-sim is shutting down", Type: "server_error"})
			return
		}
		s.inflight.Add(1)
		s.mu.Unlock()
		defer s.inflight.Done()
		s.generate(w, r, p, id)
		return
	}
	get := r.Method == http.MethodGet || r.Method == http.MethodHead
	switch r.URL.Path {
	case "/health":
		if get {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"status":"ok"}`))
			return
		}
	case "/v1/models":
		if get {
			s.serveModels(w)
			return
		}
	case "/metrics":
		if get {
			s.serveMetrics(w)
			return
		}
	case "/dcgm/metrics":
		if !s.servesDCGM() {
			writeJSONError(w, openAIChat{}, &apiError{Status: http.StatusNotFound, Message: "no GPU exporter in llm-sim: set power_idle_w or power_per_request_w", Type: "invalid_request_error", Code: "not_found"})
			return
		}
		if get {
			s.serveDCGM(w)
			return
		}
	default:
		writeJSONError(w, openAIChat{}, &apiError{Status: http.StatusNotFound, Message: "no route " + r.URL.Path + " in llm-sim", Type: "invalid_request_error", Code: "not_found"})
		return
	}
	w.Header().Set("Allow", "GET, HEAD")
	writeJSONError(w, openAIChat{}, &apiError{Status: http.StatusMethodNotAllowed, Message: r.Method + " is not allowed on " + r.URL.Path, Type: "invalid_request_error"})
}

// serveModels lists the models in vLLM's shape: OpenAI's entry plus root
// and max_model_len, the context length (max_context_tokens; absent when the
// model has none, as an OpenAI-shaped server leaves it out).
func (s *Server) serveModels(w http.ResponseWriter) {
	type entry struct {
		ID          string `json:"id"`
		Object      string `json:"object"`
		Created     int64  `json:"created"`
		OwnedBy     string `json:"owned_by"`
		Root        string `json:"root"`
		MaxModelLen int    `json:"max_model_len,omitempty"`
	}
	data := make([]entry, len(s.order))
	for i, m := range s.order {
		data[i] = entry{ID: m.name, Object: "model", Created: m.created, OwnedBy: "llm-sim", Root: m.name, MaxModelLen: m.p.MaxContextTokens}
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(mustJSON(struct {
		Object string  `json:"object"`
		Data   []entry `json:"data"`
	}{"list", data}))
}

// requestID echoes a sane client X-Request-Id or makes one.
func (s *Server) requestID(r *http.Request) string {
	if id := r.Header.Get("X-Request-Id"); id != "" && len(id) <= 200 {
		ok := true
		for i := 0; i < len(id) && ok; i++ {
			ok = id[i] > ' ' && id[i] < 0x7f
		}
		if ok {
			return id
		}
	}
	return "sim-" + s.idPrefix + "-" + strconv.FormatUint(s.idSeq.Add(1), 10)
}

func writeJSONError(w http.ResponseWriter, p protocol, e *apiError) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	_, _ = w.Write(p.errorBody(e))
}
