package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// htmlPage is the body of the html fault: what a captive portal or a
// misconfigured gateway answers with status 200.
const htmlPage = "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>" +
	"<body><h1>502 Bad Gateway</h1><p>llm-sim html fault</p></body></html>\n"

// generate serves one generation request in protocol p.
func (s *Server) generate(w http.ResponseWriter, r *http.Request, p protocol, id string) {
	rec := newTraceRecord(r, id)
	defer s.finishTrace(rec)
	fail := func(e *apiError, o Outcome) {
		rec.Status, rec.Outcome, rec.Error = e.Status, o, e.Message
		writeJSONError(w, p, e)
	}
	raw, body, input, req, aerr := s.readGeneration(w, r, p)
	s.traceRequest(rec, r, raw) // what the client sent, before a previous_response_id is expanded
	if aerr != nil {
		fail(aerr, OutcomeBadRequest)
		return
	}
	rec.Stream = req.Stream
	m, aerr := s.modelOf(req)
	if aerr != nil {
		fail(aerr, OutcomeBadRequest)
		return
	}
	rec.Model = m.name
	faults, err := m.requestFaults(r)
	if err != nil {
		fail(badRequest(FaultHeader, err.Error()), OutcomeBadRequest)
		return
	}
	rec.Fault = faults.String()
	maxTokens, ids, promptTokens := s.sizePrompt(rec, req, m, body)
	if e := m.contextError(promptTokens, maxTokens); e != nil {
		fail(e, OutcomeBadRequest)
		return
	}

	if s.answeredByFault(w, r, rec, faults, fail) {
		return
	}

	textSeed := s.textSeed(m, req)
	ans, aerr := s.shapeAnswer(p, r, req, body, m, id, maxTokens, textSeed)
	if aerr != nil {
		fail(aerr, OutcomeBadRequest)
		return
	}
	think, tools, outTokens, reason := ans.think, ans.tools, ans.outTokens, ans.reason
	seq, err := m.eng.submit(seqSpec{
		PromptIDs: ids, PromptTokens: promptTokens, OutputTokens: outTokens,
		FinishReason: reason, TextSeed: textSeed, Faults: faults,
	})
	if err != nil {
		e, o := m.refusal(w, err)
		fail(e, o)
		return
	}
	meta := &respMeta{
		id: p.idPrefix() + id, model: m.name, created: time.Now().Unix(),
		includeUsage: req.IncludeUsage, continuousUsage: req.ContinuousUsage, promptTokens: promptTokens,
		outputTokens: outTokens, finishReason: reason, quirks: m.p.quirks(), think: think,
	}
	if _, ok := p.(openAIResponses); ok {
		meta.keep = func(output []any) { s.stored.keep(meta.id, input, output) }
	}
	st := &genState{s: s, w: w, r: r, p: p, m: m, seq: seq, meta: meta, faults: faults, rec: rec, reason: reason, textSeed: textSeed, tools: tools}
	if req.Stream {
		st.stream()
	} else {
		st.complete()
	}
}

// answerShape is what an answer will hold: its reasoning (nil: none), its
// tool calls (nil: text), its output tokens in all and why it ends.
type answerShape struct {
	think     *reasoningPlan
	tools     *toolPlan
	outTokens int
	reason    string
}

// shapeAnswer decides the answer within maxTokens: the reasoning asked for
// first (it leaves the answer at least one token), then the answer's length
// from the model's output distribution (the whole budget with ignore_eos),
// or the tool calls asked for.
func (s *Server) shapeAnswer(p protocol, r *http.Request, req *genRequest, body []byte, m *model, id string,
	maxTokens int, textSeed uint64) (answerShape, *apiError) {
	think, aerr := reasoningAnswer(p, r, req.Stream, &m.p, textSeed, s.signKey()) // reasoning on demand (reasoning.go)
	if aerr == nil {
		aerr = checkReasoning(p, body, think != nil, s.signKey())
	}
	if aerr != nil {
		return answerShape{}, aerr
	}
	if think != nil {
		if think.tokens = min(think.tokens, maxTokens-1); think.tokens == 0 {
			think = nil
		}
	}
	budget := maxTokens - think.size()
	outTokens, reason := budget, "length"
	if !req.IgnoreEOS {
		outTokens, reason = m.outputLength(budget, textSeed)
	}
	tools, aerr := toolAnswer(p, r, body, textSeed, id, req.Stream, m.p.ToolCalls) // tool calls on demand (tools.go)
	if aerr != nil {
		return answerShape{}, aerr
	}
	if tools != nil {
		outTokens, reason = tools.length(budget)
		tools.skip = think.size()
	}
	return answerShape{think: think, tools: tools, outTokens: outTokens + think.size(), reason: reason}, nil
}

// newTraceRecord starts a request's trace record at its arrival, on its connection.
func newTraceRecord(r *http.Request, id string) *TraceRecord {
	rec := &TraceRecord{RequestID: id, Endpoint: r.URL.Path, ArrivalNS: unixNano(arrivalOf(r.Context(), time.Now())), Outcome: OutcomeOK}
	rec.Conn, rec.ConnRequest = connOf(r.Context())
	rec.Proto = r.Proto
	return rec
}

// finishTrace ends a request's trace record, counts its outcome and writes it to the trace.
func (s *Server) finishTrace(rec *TraceRecord) {
	if rec.DoneNS == 0 {
		rec.DoneNS = nowNS()
	}
	s.outcomes.add(rec.Model, rec.Outcome)
	if s.trace != nil {
		s.trace.write(rec)
	}
}

// readGeneration reads and parses the request body, refusing one over
// max_body_bytes. raw is the body as sent; body is the one answered: for
// Responses, with a previous_response_id's conversation before its input
// (input is then that whole input, kept with the answer).
func (s *Server) readGeneration(w http.ResponseWriter, r *http.Request, p protocol) (raw, body []byte, input []json.RawMessage, req *genRequest, aerr *apiError) {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			return nil, nil, nil, nil, &apiError{
				Status: http.StatusRequestEntityTooLarge, Type: "invalid_request_error", Code: "request_too_large",
				Message: fmt.Sprintf("request body is larger than %d bytes (llm-sim max_body_bytes)", mbe.Limit),
			}
		}
		return nil, nil, nil, nil, badRequest("", "could not read the request body: "+err.Error())
	}
	body = raw
	if _, ok := p.(openAIResponses); ok {
		if body, input, aerr = s.stored.expand(raw); aerr != nil {
			return raw, nil, nil, nil, aerr
		}
	}
	req, aerr = parseRequest(p, r, body)
	return raw, body, input, req, aerr
}

// modelOf is the model a request names, the first one when it names none.
func (s *Server) modelOf(req *genRequest) (*model, *apiError) {
	m := s.order[0]
	if req.Model != "" {
		var ok bool
		if m, ok = s.models[req.Model]; !ok {
			return nil, &apiError{
				Status: http.StatusNotFound, Type: "invalid_request_error", Param: "model", Code: "model_not_found",
				Message: fmt.Sprintf("The model %q does not exist (llm-sim serves: %s)", req.Model, strings.Join(s.Models(), ", ")),
			}
		}
	}
	return m, nil
}

// sizePrompt settles the answer's token budget and the prompt's tokens:
// images cost prefill as image tokens, not as their text (image_cost.go).
// It notes both in the trace record.
func (s *Server) sizePrompt(rec *TraceRecord, req *genRequest, m *model, body []byte) (maxTokens int, ids []uint32, promptTokens int) {
	maxTokens = req.MaxTokens
	if maxTokens == 0 {
		maxTokens = m.p.DefaultMaxTokens
	}
	rec.MaxTokens = maxTokens
	img := imageCost(body)
	if img.Count > 0 {
		req.Prompt = withoutDataURLs(req.Prompt)
	}
	ids, promptTokens = s.promptTokens(req, m)
	promptTokens += img.Tokens
	rec.Images, rec.ImageBytes, rec.ImageTokens = img.Count, img.Bytes, img.Tokens
	rec.PromptTokens = promptTokens
	return maxTokens, ids, promptTokens
}

// refusal is the answer to a request the engine would not take: 429 with
// Retry-After when its queue is full, else 503 while it shuts down.
func (m *model) refusal(w http.ResponseWriter, err error) (*apiError, Outcome) {
	if errors.Is(err, errQueueFull) {
		w.Header().Set("Retry-After", strconv.Itoa(m.p.RetryAfterSec))
		return &apiError{
			Status: http.StatusTooManyRequests, Type: "rate_limit_error", Code: "rate_limit_exceeded",
			Message: fmt.Sprintf("llm-sim: %s has %d requests waiting (max_queue); retry later", m.name, m.p.MaxQueue),
		}, OutcomeQueueFull
	}
	return &apiError{Status: http.StatusServiceUnavailable, Type: "server_error", Message: "llm-sim is shutting down"}, OutcomeShutdown
}

// promptTokens returns the prompt's token ids (when the prefix cache needs
// them) and its token count.
func (s *Server) promptTokens(req *genRequest, m *model) ([]uint32, int) {
	if req.PromptIDs != nil {
		return req.PromptIDs, len(req.PromptIDs)
	}
	if !m.p.PrefixCache {
		return nil, s.tok.Count(req.Prompt)
	}
	enc := s.tok.Encode(req.Prompt)
	ids := make([]uint32, len(enc))
	for i, t := range enc {
		ids[i] = uint32(t) // #nosec G115 -- token ids fit
	}
	return ids, len(ids)
}

// textSeed makes the answer a function of the seed, the model, the prompt
// and the request's own seed: the same question gets the same answer.
func (s *Server) textSeed(m *model, req *genRequest) uint64 {
	h := hashString(splitmix64(s.cfg.Seed), m.name)
	h = hashString(h, req.Prompt)
	for _, id := range req.PromptIDs {
		h = splitmix64(h ^ uint64(id))
	}
	if req.Seed != nil {
		h = splitmix64(h ^ uint64(*req.Seed)) // #nosec G115 -- bits, not a quantity
	}
	return h
}

// outputLength is the number of tokens to generate and the finish reason.
func (m *model) outputLength(maxTokens int, seed uint64) (int, string) {
	var n int
	rng := rand.New(rand.NewPCG(seed, 0x6f7574707574)) // #nosec G404 -- simulation
	span := math.Max(m.p.OutputMeanTokens-float64(m.p.OutputMinTokens), 0)
	switch m.p.OutputDist {
	case "uniform": // [min, 2·mean − min]
		n = m.p.OutputMinTokens + int(math.Round(rng.Float64()*2*span))
	case "exponential":
		n = m.p.OutputMinTokens + int(math.Round(rng.ExpFloat64()*span))
	default:
		return maxTokens, "length"
	}
	n = max(n, 1)
	if n >= maxTokens {
		return maxTokens, "length"
	}
	return n, "stop"
}

// sleep waits d unless the request or the server ends first.
func (s *Server) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-s.done:
		return false
	}
}

// genState is one request being answered.
type genState struct {
	s        *Server
	w        http.ResponseWriter
	r        *http.Request
	p        protocol
	m        *model
	seq      *Seq
	meta     *respMeta
	faults   Faults
	rec      *TraceRecord
	reason   string
	textSeed uint64
	tools    *toolPlan // a tool-call answer's calls (nil: text)
	counted  bool      // in llm-sim's vLLM exposition already
}

// stream writes the answer as events, flushing each (or, in gateway mode,
// every gateway interval).
func (g *genState) stream() {
	e, gateway, err := g.openStream()
	if err != nil {
		g.abandon(err, 0)
		return
	}
	var tick <-chan time.Time
	if gateway > 0 {
		t := time.NewTicker(gateway)
		defer t.Stop()
		tick = t.C
	}
	if err := e.relay(g.r.Context(), tick); err != nil {
		g.abandon(err, e.total)
		return
	}
	tl := g.m.eng.timeline(g.seq)
	g.meta.cachedTokens, g.meta.phases = tl.CachedTokens, tl
	g.countFinished(tl) // before the answer's end goes out, as vLLM counts it when the engine ends it
	if err := g.endStream(e, tl); err != nil {
		g.abandon(err, e.total)
		return
	}
	g.end(tl, e.total, g.rec.Outcome)
	g.w.Header().Set("Server-Timing", g.rec.ServerTiming(unixNano(tl.LastToken)))
}

// openStream sends the stream's headers at once (a real server does, before
// its first token) and returns the writer of its events and the gateway's
// flush interval (0: every event is flushed).
func (g *genState) openStream() (*eventWriter, time.Duration, error) {
	var rnd streamRenderer
	if ts, ok := g.p.(toolStreamer); ok && g.tools != nil {
		rnd = ts.toolStream(g.meta, g.tools)
	} else {
		rnd = g.p.newStream(g.meta)
	}
	h := g.w.Header()
	h.Set("Content-Type", rnd.contentType())
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Set("Trailer", "Server-Timing")
	g.w.WriteHeader(http.StatusOK)
	g.rec.Status = http.StatusOK
	gateway := g.faults.Gateway
	if gateway == 0 {
		gateway = ms(g.m.p.GatewayFlushMs)
	}
	out := &sseOut{w: g.w, rc: http.NewResponseController(g.w), rec: g.rec, traced: g.s.trace != nil, gateway: gateway > 0}
	g.rec.HeadersNS = nowNS()
	e := &eventWriter{g: g, rnd: rnd, out: out, malformed: g.faults.Malformed}
	return e, gateway, out.rc.Flush()
}

// eventWriter writes one streamed answer's events: the protocol's opening
// before the first token, then the tokens as the engine makes them, and the
// malformed fault once the answer has reached its token count.
type eventWriter struct {
	g         *genState
	rnd       streamRenderer
	out       *sseOut
	text      []byte
	total     int // tokens written
	started   bool
	malformed int // the token count at which to break the stream; -1 once done (or never)
}

// checkMalformed breaks the stream once it has reached the fault's token count.
func (e *eventWriter) checkMalformed() error {
	if e.malformed >= 0 && e.total >= e.malformed {
		e.malformed = -1
		e.g.rec.Outcome = OutcomeMalformed
		return e.rnd.malformed(e.out)
	}
	return nil
}

// begin writes the protocol's opening events once, before anything else.
func (e *eventWriter) begin() error {
	if e.started {
		return nil
	}
	e.started = true
	if err := e.rnd.start(e.out); err != nil {
		return err
	}
	return e.checkMalformed()
}

// relay writes the tokens as the engine makes them until the sequence ends,
// flushing on the gateway's tick, and stops when the client goes away.
func (e *eventWriter) relay(ctx context.Context, tick <-chan time.Time) error {
	var evs []tokenEvent
	for final := false; !final; {
		select {
		case <-e.g.seq.ready:
		case <-tick:
			if err := e.out.flush(); err != nil {
				return err
			}
			continue
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		evs, final = e.g.seq.take(evs[:0])
		for _, ev := range evs {
			if err := e.tokens(ev); err != nil {
				return err
			}
		}
	}
	return nil
}

// tokens writes one engine step's tokens, stamped with the time the engine
// made them.
func (e *eventWriter) tokens(ev tokenEvent) error {
	if err := e.begin(); err != nil {
		return err
	}
	e.g.meta.cachedTokens = ev.Cached
	e.out.emitAt = ev.At
	defer func() { e.out.emitAt = time.Time{} }()
	from, n := ev.From, ev.N
	if think := e.g.meta.think; think != nil && from < think.tokens {
		// The step's reasoning tokens first (reasoning.go): every stream
		// that has reasoning implements reasoner.
		k := min(n, think.tokens-from)
		e.text = think.words(e.text[:0], from, k)
		e.total += k
		if err := e.rnd.(reasoner).reason(e.out, e.text, k, e.total); err != nil {
			return err
		}
		from, n = from+k, n-k
		if n == 0 {
			return e.checkMalformed()
		}
	}
	e.text = appendWords(e.text[:0], e.g.textSeed, from, n)
	e.total += n
	if err := e.rnd.tokens(e.out, e.text, n, e.total); err != nil {
		return err
	}
	return e.checkMalformed()
}

// endStream writes how the answer ended, as the engine's timeline says: a
// dropped connection (the handler aborts), an error or shutdown event, or
// the finish reason; then flushes.
func (g *genState) endStream(e *eventWriter, tl seqTimeline) error {
	var err error
	switch tl.Outcome {
	case OutcomeDisconnect:
		_ = e.out.flush()
		g.end(tl, e.total, OutcomeDisconnect)
		panic(http.ErrAbortHandler) // net/http drops the connection without ending the body
	case OutcomeError:
		if err = e.begin(); err == nil {
			err = e.rnd.fail(e.out, &apiError{
				Status: http.StatusInternalServerError, Type: "server_error", Code: "500",
				Message: fmt.Sprintf("llm-sim fault: error after %d tokens", e.total),
			}, e.total)
		}
		g.rec.Outcome = OutcomeError
	case OutcomeShutdown:
		if err = e.begin(); err == nil {
			err = e.rnd.fail(e.out, &apiError{Status: http.StatusServiceUnavailable, Type: "server_error", Message: "llm-sim is shutting down"}, e.total)
		}
		g.rec.Outcome = OutcomeShutdown
	default:
		if err = e.begin(); err == nil {
			err = e.rnd.finish(e.out, g.reason, e.total)
		}
		g.rec.FinishReason = g.reason
	}
	if err != nil {
		return err
	}
	return e.out.flush()
}

// complete waits for the whole answer and writes it as one JSON body.
func (g *genState) complete() {
	var evs []tokenEvent
	total := 0
	ctx := g.r.Context()
	for final := false; !final; {
		select {
		case <-g.seq.ready:
		case <-ctx.Done():
			g.abandon(context.Cause(ctx), total)
			return
		}
		evs, final = g.seq.take(evs[:0])
		for _, ev := range evs {
			total += ev.N
		}
	}
	tl := g.m.eng.timeline(g.seq)
	g.meta.cachedTokens, g.meta.phases = tl.CachedTokens, tl
	g.countFinished(tl) // before the answer's end goes out, as vLLM counts it when the engine ends it
	fail := func(e *apiError, o Outcome) {
		g.end(tl, total, o)
		g.rec.Status, g.rec.Error = e.Status, e.Message
		g.w.Header().Set("Server-Timing", g.rec.ServerTiming(unixNano(tl.LastToken)))
		writeJSONError(g.w, g.p, e)
	}
	switch tl.Outcome {
	case OutcomeDisconnect:
		g.end(tl, total, OutcomeDisconnect)
		panic(http.ErrAbortHandler)
	case OutcomeError:
		fail(&apiError{Status: http.StatusInternalServerError, Type: "server_error", Message: fmt.Sprintf("llm-sim fault: error after %d tokens", total)}, OutcomeError)
		return
	case OutcomeShutdown:
		fail(&apiError{Status: http.StatusServiceUnavailable, Type: "server_error", Message: "llm-sim is shutting down"}, OutcomeShutdown)
		return
	}
	var body []byte
	outcome := OutcomeOK
	if g.faults.Malformed >= 0 && g.faults.Malformed <= total {
		body, outcome = g.p.truncated(g.meta), OutcomeMalformed
	} else {
		body = g.p.complete(g.meta, appendWords(nil, g.textSeed, 0, total), g.reason, total)
		g.rec.FinishReason = g.reason
	}
	g.end(tl, total, outcome)
	g.rec.Status = http.StatusOK
	g.w.Header().Set("Content-Type", "application/json")
	g.w.Header().Set("Server-Timing", g.rec.ServerTiming(unixNano(tl.LastToken)))
	now := nowNS()
	_, err := g.w.Write(body)
	g.rec.HeadersNS, g.rec.DoneNS = now, nowNS()
	if err != nil {
		g.rec.Outcome, g.rec.Error = OutcomeCanceled, err.Error()
		return
	}
	g.rec.FirstTokenNS = now
	if g.s.trace != nil {
		g.rec.ChunksNS, g.rec.ChunkTokens, g.rec.EmitNS = []int64{now}, []int{total}, []int64{unixNano(tl.LastToken)}
	}
}

// end copies the engine's timeline into the trace record.
func (g *genState) end(tl seqTimeline, total int, o Outcome) {
	r := g.rec
	r.EnqueuedNS, r.AdmittedNS = unixNano(tl.Enqueued), unixNano(tl.Admitted)
	r.PrefillStartNS, r.PrefillEndNS = unixNano(tl.PrefillStart), unixNano(tl.PrefillEnd)
	r.CachedTokens, r.CompletionTokens, r.Outcome = tl.CachedTokens, total, o
	r.DoneNS = nowNS()
	if t := g.meta.think; t != nil {
		r.Reasoning, r.Signatures = string(t.text), t.signatures
	}
}

// abandon ends a request whose client went away (or whose writes fail).
func (g *genState) abandon(err error, total int) {
	g.m.eng.cancel(g.seq)
	tl := g.m.eng.timeline(g.seq)
	g.countFinished(tl)
	g.end(tl, total, OutcomeCanceled)
	g.rec.Error = err.Error()
}

// sseOut writes events to the response: each written and flushed at once,
// or, in gateway mode, held until the next flush.
type sseOut struct {
	w       io.Writer
	rc      *http.ResponseController
	rec     *TraceRecord
	traced  bool
	gateway bool
	buf     []byte
	held    int       // output tokens in buf (gateway mode)
	pending int       // first trace chunk not flushed yet (gateway mode)
	emitAt  time.Time // engine time of the tokens being written
}

func (o *sseOut) event(b []byte, tokens int) error {
	var now int64
	if o.traced {
		now = nowNS() // just before the bytes go: never after the client has them
	}
	if o.gateway {
		o.buf = append(o.buf, b...)
		o.held += tokens
		o.record(now, 0, tokens)
		return nil
	}
	if _, err := o.w.Write(b); err != nil {
		return err
	}
	if err := o.rc.Flush(); err != nil {
		return err
	}
	if o.traced && tokens > 0 && o.rec.FirstTokenNS == 0 {
		o.rec.FirstTokenNS = now
	}
	o.record(now, now, tokens)
	return nil
}

// record notes one event in the trace; the engine's time of its tokens, if
// any, is its emit time.
func (o *sseOut) record(now, flushed int64, tokens int) {
	if !o.traced {
		return
	}
	emit := now
	if !o.emitAt.IsZero() {
		emit = unixNano(o.emitAt)
	}
	o.rec.ChunksNS = append(o.rec.ChunksNS, flushed)
	o.rec.ChunkTokens = append(o.rec.ChunkTokens, tokens)
	o.rec.EmitNS = append(o.rec.EmitNS, emit)
}

// flush sends what gateway mode holds.
func (o *sseOut) flush() error {
	if !o.gateway || len(o.buf) == 0 {
		return nil
	}
	var now int64
	if o.traced {
		now = nowNS()
	}
	_, err := o.w.Write(o.buf)
	if err == nil {
		err = o.rc.Flush()
	}
	o.buf = o.buf[:0]
	if err != nil {
		return err
	}
	if o.traced {
		if o.held > 0 && o.rec.FirstTokenNS == 0 {
			o.rec.FirstTokenNS = now
		}
		for i := o.pending; i < len(o.rec.ChunksNS); i++ {
			o.rec.ChunksNS[i] = now
		}
		o.pending = len(o.rec.ChunksNS)
	}
	o.held = 0
	return nil
}
