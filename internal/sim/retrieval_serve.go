package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The embeddings and rerank routes: not generation, so not a protocol of
// render.go. A request's inputs (or query-document pairs) each become a
// sequence of the model's engine that prefills and ends, one output token
// never sent: the engine's continuous batching puts the inputs of
// concurrent requests into the same steps, and a step's time grows with
// the tokens it prefills, so latency grows with batch size and input
// length as on a real server. The answer is written when the last
// sequence ends.

// retrievalRoute is one embeddings or rerank wire format.
type retrievalRoute struct {
	api       string // openai, ollama, tei, gemini, rerank
	parse     func(r *http.Request, body []byte) (*retrievalRequest, *apiError)
	errorBody func(e *apiError) []byte
}

// retrievalMeta is what an answer repeats of its request.
type retrievalMeta struct {
	id, model string
	tokens    int
	totalNS   int64 // arrival → the last sequence's end (Ollama's total_duration)
}

func teiErrorBody(e *apiError) []byte {
	return mustJSON(struct {
		Error     string `json:"error"`
		ErrorType string `json:"error_type"`
	}{e.Message, e.Type})
}

// lookupRetrieval finds the embeddings or rerank route serving path.
func lookupRetrieval(path string) (*retrievalRoute, bool) {
	switch path {
	case "/v1/embeddings":
		return &retrievalRoute{"openai", parseOpenAIEmbed, openAIErrorBody}, true
	case "/api/embed":
		return &retrievalRoute{"ollama", parseOllamaEmbed, ollama{}.errorBody}, true
	case "/embed":
		return &retrievalRoute{"tei", parseTEIEmbed, teiErrorBody}, true
	case "/v1/rerank", "/v2/rerank", "/rerank":
		return &retrievalRoute{"rerank", parseRerank, openAIErrorBody}, true
	}
	if strings.HasPrefix(path, geminiPrefix) && (strings.HasSuffix(path, ":embedContent") || strings.HasSuffix(path, ":batchEmbedContents")) {
		return &retrievalRoute{"gemini", parseGeminiEmbed, gemini{}.errorBody}, true
	}
	return nil, false
}

// serveRetrieval serves one embeddings or rerank request.
func (s *Server) serveRetrieval(w http.ResponseWriter, r *http.Request, rt *retrievalRoute, id string) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeRetrievalError(w, rt.errorBody, &apiError{Status: http.StatusMethodNotAllowed, Message: r.Method + " is not allowed on " + r.URL.Path + ": use POST", Type: "invalid_request_error"})
		return
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		writeRetrievalError(w, rt.errorBody, &apiError{Status: http.StatusServiceUnavailable, Message: "llm-sim is shutting down", Type: "server_error"})
		return
	}
	s.inflight.Add(1)
	s.mu.Unlock()
	defer s.inflight.Done()

	rec := &TraceRecord{RequestID: id, Endpoint: r.URL.Path, ArrivalNS: unixNano(arrivalOf(r.Context(), time.Now())), Outcome: OutcomeOK, Op: "embed"}
	rec.Conn, rec.ConnRequest = connOf(r.Context())
	rec.Proto = r.Proto
	defer func() {
		if rec.DoneNS == 0 {
			rec.DoneNS = nowNS()
		}
		s.outcomes.add(rec.Model, rec.Outcome)
		if s.trace != nil {
			s.trace.write(rec)
		}
	}()
	c := &retrievalCall{s: s, w: w, r: r, rt: rt, rec: rec, errorBody: rt.errorBody}
	req, m, faults, ok := c.read()
	if !ok {
		return
	}
	seqTokens := c.sequences(req)
	if s.answeredByFault(w, r, rec, faults, c.fail) {
		return
	}
	tl, outcome, aerr := s.runSequences(r.Context(), m, seqTokens, faults.TTFT)
	rec.EnqueuedNS, rec.AdmittedNS = unixNano(tl.Enqueued), unixNano(tl.Admitted)
	rec.PrefillStartNS, rec.PrefillEndNS = unixNano(tl.PrefillStart), unixNano(tl.PrefillEnd)
	if aerr != nil {
		if aerr.Status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", strconv.Itoa(m.p.RetryAfterSec))
		}
		c.fail(aerr, outcome)
		return
	}
	if outcome == OutcomeCanceled {
		rec.Outcome = OutcomeCanceled
		return
	}
	c.answer(req, m, tl, faults, id)
}

// retrievalCall is one embeddings or rerank request being served.
type retrievalCall struct {
	s         *Server
	w         http.ResponseWriter
	r         *http.Request
	rt        *retrievalRoute
	rec       *TraceRecord
	errorBody func(*apiError) []byte // the route's, or TEI's for a TEI rerank
	tei       bool                   // TEI's rerank shape
}

// fail answers with a classified error and records it.
func (c *retrievalCall) fail(e *apiError, o Outcome) {
	c.rec.Status, c.rec.Outcome, c.rec.Error = e.Status, o, e.Message
	writeRetrievalError(c.w, c.errorBody, e)
}

// read reads and parses the request, and finds its model and faults; ok is
// false when it answered with an error instead.
func (c *retrievalCall) read() (req *retrievalRequest, m *model, faults Faults, ok bool) {
	s, rec := c.s, c.rec
	body, err := io.ReadAll(http.MaxBytesReader(c.w, c.r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		c.fail(badRequest("", "could not read the request body: "+err.Error()), OutcomeBadRequest)
		return nil, nil, faults, false
	}
	c.tei = c.rt.api == "tei"
	if c.rt.api == "rerank" {
		rec.Op = "rerank"
		if c.tei = isTEIRerank(body); c.tei {
			c.errorBody = teiErrorBody
		}
	}
	req, aerr := c.rt.parse(c.r, body)
	if aerr != nil {
		c.fail(aerr, OutcomeBadRequest)
		return nil, nil, faults, false
	}
	m = s.order[0]
	if req.Model != "" {
		var found bool
		if m, found = s.models[req.Model]; !found {
			c.fail(&apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Param: "model", Code: "model_not_found",
				Message: fmt.Sprintf("The model %q does not exist (llm-sim serves: %s)", req.Model, strings.Join(s.Models(), ", "))}, OutcomeBadRequest)
			return nil, nil, faults, false
		}
	}
	rec.Model = m.name
	if faults, err = m.requestFaults(c.r); err != nil {
		c.fail(badRequest(FaultHeader, err.Error()), OutcomeBadRequest)
		return nil, nil, faults, false
	}
	rec.Fault = faults.String()
	return req, m, faults, true
}

// sequences is the prompt tokens of each sequence the request becomes: one
// per input, or per (query, document) pair.
func (c *retrievalCall) sequences(req *retrievalRequest) []int {
	var seqTokens []int
	tok := c.s.tok
	if c.rec.Op == "rerank" {
		q := tok.Count(req.Query)
		for _, d := range req.Documents {
			seqTokens = append(seqTokens, q+tok.Count(d))
		}
	} else {
		for _, in := range req.Inputs {
			seqTokens = append(seqTokens, max(tok.Count(in), 1))
		}
	}
	c.rec.Inputs = len(seqTokens)
	for _, n := range seqTokens {
		c.rec.PromptTokens += n
	}
	return seqTokens
}

// answer writes the vectors or scores once every sequence has ended.
func (c *retrievalCall) answer(req *retrievalRequest, m *model, tl seqTimeline, faults Faults, id string) {
	rec := c.rec
	meta := &retrievalMeta{id: id, model: m.name, tokens: rec.PromptTokens, totalNS: unixNano(tl.PrefillEnd) - rec.ArrivalNS}
	var out []byte
	if rec.Op == "rerank" {
		out = renderRerank(c.tei, req, meta)
	} else {
		dim := req.Dimensions
		if dim == 0 {
			dim = defaultEmbedDim
		}
		seed := hashString(splitmix64(c.s.cfg.Seed), m.name)
		vecs := make([][]float32, len(req.Inputs))
		for i, in := range req.Inputs {
			vecs[i] = embedVector(seed, in, dim)
		}
		out = renderEmbeddings(c.rt.api, req, vecs, meta)
	}
	h := c.w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Server-Timing", rec.ServerTiming(unixNano(tl.PrefillEnd)))
	rec.Status, rec.HeadersNS = http.StatusOK, nowNS()
	if faults.Disconnect >= 0 {
		// Half the answer, then the connection drops: a body cut short.
		h.Set("Content-Length", strconv.Itoa(len(out)))
		c.w.WriteHeader(http.StatusOK)
		_, _ = c.w.Write(out[:len(out)/2])
		_ = http.NewResponseController(c.w).Flush()
		rec.Outcome, rec.DoneNS = OutcomeDisconnect, nowNS()
		panic(http.ErrAbortHandler)
	}
	if _, err := c.w.Write(out); err != nil {
		rec.Outcome, rec.Error = OutcomeCanceled, err.Error()
	}
	rec.DoneNS = nowNS()
}

// runSequences runs one prefill-only sequence per entry of tokens and waits
// for all of them. The timeline spans them: the first enqueue and admission,
// the first prefill start and the last prefill end. delay (the ttft fault)
// holds every sequence after its prefill, as it holds a first token.
func (s *Server) runSequences(ctx context.Context, m *model, tokens []int, delay time.Duration) (seqTimeline, Outcome, *apiError) {
	var faults = noFaults()
	faults.TTFT = delay
	seqs := make([]*Seq, 0, len(tokens))
	cancelAll := func() {
		for _, q := range seqs {
			m.eng.cancel(q)
		}
	}
	for _, n := range tokens {
		q, err := m.eng.submit(seqSpec{PromptTokens: n, OutputTokens: 1, FinishReason: "stop", Faults: faults})
		switch {
		case errors.Is(err, errQueueFull):
			cancelAll()
			return seqTimeline{}, OutcomeQueueFull, &apiError{Status: http.StatusTooManyRequests, Type: "rate_limit_error", Code: "rate_limit_exceeded",
				Message: fmt.Sprintf("llm-sim: %s has %d requests waiting (max_queue); retry later", m.name, m.p.MaxQueue)}
		case err != nil:
			cancelAll()
			return seqTimeline{}, OutcomeShutdown, &apiError{Status: http.StatusServiceUnavailable, Type: "server_error", Message: "llm-sim is shutting down"}
		}
		seqs = append(seqs, q)
	}
	for _, q := range seqs {
		select {
		case <-q.ended:
		case <-ctx.Done():
			cancelAll()
			return span(m, seqs), OutcomeCanceled, nil
		}
	}
	tl := span(m, seqs)
	if tl.Outcome == OutcomeShutdown {
		return tl, OutcomeShutdown, &apiError{Status: http.StatusServiceUnavailable, Type: "server_error", Message: "llm-sim is shutting down"}
	}
	return tl, OutcomeOK, nil
}

// span is the timeline of a request's sequences together.
func span(m *model, seqs []*Seq) seqTimeline {
	var out seqTimeline
	earliest := func(dst *time.Time, t time.Time) {
		if !t.IsZero() && (dst.IsZero() || t.Before(*dst)) {
			*dst = t
		}
	}
	for _, q := range seqs {
		tl := m.eng.timeline(q)
		earliest(&out.Enqueued, tl.Enqueued)
		earliest(&out.Admitted, tl.Admitted)
		earliest(&out.PrefillStart, tl.PrefillStart)
		if tl.PrefillEnd.After(out.PrefillEnd) {
			out.PrefillEnd = tl.PrefillEnd
		}
		if tl.Outcome == OutcomeShutdown {
			out.Outcome = OutcomeShutdown
		}
	}
	return out
}

func writeRetrievalError(w http.ResponseWriter, body func(*apiError) []byte, e *apiError) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	_, _ = w.Write(body(e))
}
