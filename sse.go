package llmstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/grafana/sobek"
	"github.com/mstoykov/k6-taskqueue-lib/taskqueue"
	"github.com/sirupsen/logrus"
	"go.k6.io/k6/js/promises"
	"go.k6.io/k6/lib"
	"go.k6.io/k6/lib/netext/httpext"
	"go.k6.io/k6/metrics"
	"gopkg.in/guregu/null.v3"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/protocol"
	"github.com/llmstream/xk6-llmstream/internal/stream"
	"github.com/llmstream/xk6-llmstream/internal/tokenizer"
)

// errorBodyLimit bounds how much of an error response is read for its message.
const errorBodyLimit = 64 << 10

// Client is the JS Client: one endpoint, protocol and set of defaults.
type Client struct {
	mi       *ModuleInstance
	opts     *config.Client
	fallback *Client
	count    func(string) int
}

func (mi *ModuleInstance) parseClient(v sobek.Value) (*Client, error) {
	o, err := exportObject(v, "Client options")
	if err != nil {
		return nil, err
	}
	if o == nil {
		return nil, errors.New("new Client(options): options are required, at least {baseURL: '…'}")
	}
	var fallback *Client
	if f, ok := o["fallback"]; ok {
		if fallback, ok = f.(*Client); !ok {
			return nil, errors.New("Client options: fallback must be another Client")
		}
		delete(o, "fallback")
	}
	opts, err := config.ParseClient(o)
	if err != nil {
		return nil, err
	}
	c := &Client{mi: mi, opts: opts, fallback: fallback}
	if opts.Tokenizer != "none" {
		tk, err := tokenizer.Get(opts.Tokenizer)
		if err != nil {
			return nil, fmt.Errorf("Client options: %w", err)
		}
		c.count = tk.Count
	}
	return c, nil
}

// callPlan is everything a call needs, prepared on the event loop.
type callPlan struct {
	method   string
	payload  []byte
	url      string
	header   http.Header
	params   *config.Call
	model    string
	category string
	tags     metrics.TagsAndMeta
	onEvent  func(stream.RawEvent)
	finish   func() // closes the per-event queue
	route    string
	// sharedPrefix says the prompt came from a dataset's shared-prefix set (params.item).
	sharedPrefix bool
	// eventLag is the longest wait of an event for its JS callback, in ns.
	eventLag atomic.Int64
}

// Chat starts a streamed call and returns a Promise of its result. It never
// rejects for a failed call (the result says ok: false) unless k6's throw option is set.
func (c *Client) Chat(body sobek.Value, params sobek.Value) (*sobek.Promise, error) {
	vu := c.mi.vu
	st := vu.State()
	if st == nil {
		return nil, errors.New("chat() can only be called in the VU context (default function, scenarios, setup), not in init")
	}
	plan, err := c.plan(st, body, params)
	if err != nil {
		return nil, err
	}
	fb, err := c.fallbackPlan(st, body, params)
	if err != nil {
		return nil, err
	}
	p, resolve, reject := promises.New(vu)
	ctx := vu.Context()
	go func() {
		res := c.execute(ctx, st, plan, fb)
		if st.Options.Throw.Bool && !res.res.OK {
			reject(fmt.Errorf("llmstream: %s: %s", res.errType(), res.errMessage()))
			return
		}
		resolve(res.toJS())
	}()
	return p, nil
}

// fallbackPlan prepares the same body for the fallback client, if any.
func (c *Client) fallbackPlan(st *lib.State, body, params sobek.Value) (*callPlan, error) {
	if c.fallback == nil {
		return nil, nil //nolint:nilnil // no fallback
	}
	plan, err := c.fallback.plan(st, body, params)
	if err != nil {
		return nil, fmt.Errorf("fallback: %w", err)
	}
	plan.route = "fallback"
	return plan, nil
}

func (c *Client) plan(st *lib.State, bodyV, paramsV sobek.Value) (*callPlan, error) {
	rt := c.mi.vu.Runtime()
	po, err := exportObject(paramsV, "chat params")
	if err != nil {
		return nil, err
	}
	var (
		onEvent sobek.Value
		item    map[string]any
	)
	if po != nil {
		delete(po, "onEvent")
		onEvent = paramsV.ToObject(rt).Get("onEvent")
		if it, ok := po["item"]; ok {
			if item, ok = it.(map[string]any); !ok {
				return nil, errors.New("chat params: item must be a dataset item (an object)")
			}
			delete(po, "item")
		}
	}
	params, err := config.ParseCall(po, c.opts)
	if err != nil {
		return nil, err
	}
	spec := c.opts.Protocol
	if spec.CompleteAtEOF && (bodyV == nil || sobek.IsUndefined(bodyV) || sobek.IsNull(bodyV)) {
		return c.getPlan(st, params, onEvent)
	}
	body, err := requestBody(bodyV)
	if err != nil {
		return nil, err
	}
	if s, ok := body["stream"].(bool); ok && !s {
		return nil, errors.New("chat(body): body.stream is false, but this client measures streamed answers " +
			"(leave stream unset; use k6/http for non-streamed calls)")
	}
	req := protocol.Request{Model: c.opts.Model, APIKey: c.opts.APIKey, ContinuousUsage: c.opts.ContinuousUsage}
	if m, ok := body["model"].(string); ok && m != "" {
		req.Model = m
	}
	req.PromptOnly = protocol.PromptOnly(body)
	spec.Prepare(body, req)
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("chat body: %w", err)
	}
	path := params.Path
	if path == "" {
		path = spec.Path(req)
	}
	plan := &callPlan{
		method: http.MethodPost, payload: payload, url: joinURL(c.opts.BaseURL, path), params: params,
		model: req.Model, header: c.headers(st, spec, req, params), route: "primary",
	}
	c.finishPlan(st, plan, item, onEvent)
	return plan, nil
}

// getPlan is a raw event stream opened with GET (chat(null) with protocol 'sse').
func (c *Client) getPlan(st *lib.State, params *config.Call, onEvent sobek.Value) (*callPlan, error) {
	req := protocol.Request{Model: c.opts.Model, APIKey: c.opts.APIKey}
	plan := &callPlan{
		method: http.MethodGet, url: joinURL(c.opts.BaseURL, params.Path), params: params, model: req.Model,
		header: c.headers(st, c.opts.Protocol, req, params), route: "primary",
	}
	plan.header.Del("Content-Type")
	c.finishPlan(st, plan, nil, onEvent)
	return plan, nil
}

// finishPlan adds the tags and the per-event queue.
func (c *Client) finishPlan(st *lib.State, plan *callPlan, item map[string]any, onEvent sobek.Value) {
	plan.tags = st.Tags.GetCurrentValues()
	for k, v := range c.opts.Tags {
		plan.tags.SetTag(k, v)
	}
	for k, v := range plan.params.Tags {
		plan.tags.SetTag(k, v)
	}
	plan.applyItem(item)
	plan.category, _ = plan.tags.Tags.Get("category")
	if fn, ok := sobek.AssertFunction(onEvent); ok {
		plan.onEvent, plan.finish = c.eventQueue(fn, &plan.eventLag)
	}
}

// applyItem tags a call with its dataset item's category and turn (unless the
// call's own tags set them) and remembers whether it has a shared prefix.
func (p *callPlan) applyItem(item map[string]any) {
	if item == nil {
		return
	}
	if cat, ok := item["category"].(string); ok && cat != "" {
		if _, set := p.tags.Tags.Get("category"); !set {
			p.tags.SetTag("category", cat)
		}
	}
	if turn, ok := item["turn"].(int64); ok && turn > 0 {
		if _, set := p.tags.Tags.Get("turn"); !set {
			p.tags.SetTag("turn", strconv.FormatInt(turn, 10))
		}
	}
	p.sharedPrefix, _ = item["sharedPrefix"].(bool)
}

// requestBody accepts an object or a JSON string.
func requestBody(v sobek.Value) (map[string]any, error) {
	if v == nil || sobek.IsUndefined(v) || sobek.IsNull(v) {
		return nil, errors.New("chat(body): body is required (e.g. {messages: [{role: 'user', content: 'Hi'}]})")
	}
	if s, ok := v.Export().(string); ok {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			return nil, fmt.Errorf("chat(body): body string is not a JSON object: %w", err)
		}
		return m, nil
	}
	m, ok := v.Export().(map[string]any)
	if !ok {
		return nil, fmt.Errorf("chat(body): body must be an object or a JSON string, got %s", v.ExportType())
	}
	return m, nil
}

func (c *Client) headers(st *lib.State, spec *protocol.Spec, req protocol.Request, p *config.Call) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	// Compression would batch events in the decompressor and distort every gap.
	h.Set("Accept-Encoding", "identity")
	if ua := st.Options.UserAgent; ua.Valid && ua.String != "" {
		h.Set("User-Agent", ua.String)
	}
	spec.Headers(h, req)
	for k, v := range c.opts.Headers {
		h.Set(k, v)
	}
	for k, v := range p.Headers {
		h.Set(k, v)
	}
	return h
}

func joinURL(base, path string) string {
	switch {
	case path == "":
		return base
	case strings.HasPrefix(path, "http://") || strings.HasPrefix(path, "https://"):
		return path
	case strings.HasPrefix(path, "/"):
		return base + path
	default:
		return base + "/" + path
	}
}

// eventQueue delivers events to a JS callback on the event loop, in order. The
// event was timestamped before it was queued, so callbacks never touch timing.
func (c *Client) eventQueue(fn sobek.Callable, lag *atomic.Int64) (func(stream.RawEvent), func()) {
	vu := c.mi.vu
	tq := taskqueue.New(vu.RegisterCallback)
	var once sync.Once
	var t0 time.Time
	onEvent := func(ev stream.RawEvent) {
		if t0.IsZero() {
			t0 = ev.At
		}
		at := float64(ev.At.Sub(t0)) / float64(time.Millisecond)
		tq.Queue(func() error {
			if wait := int64(time.Since(ev.At)); wait > lag.Load() {
				lag.Store(wait) // only the event loop writes it
			}
			rt := vu.Runtime()
			obj := rt.NewObject()
			_ = obj.Set("type", ev.Type)
			_ = obj.Set("id", ev.ID)
			_ = obj.Set("data", ev.Data)
			_ = obj.Set("time", at)
			_, err := fn(sobek.Undefined(), obj)
			return err
		})
	}
	return onEvent, func() { once.Do(tq.Close) }
}

// outcome is a finished call, across retries and fallback.
type outcome struct {
	res        *stream.Result
	status     int
	retries    int
	reconnects int
	connect    time.Duration
	servedBy   string
	plan       *callPlan
}

func (o *outcome) errType() string {
	if o.res.Err == nil {
		return ""
	}
	return string(o.res.Err.Type)
}

func (o *outcome) errMessage() string {
	if o.res.Err == nil {
		return ""
	}
	return o.res.Err.Message
}

// execute runs the call (with its retries), then the fallback when the primary
// failed in a way the client routes, pushes the samples, and returns the outcome.
func (c *Client) execute(ctx context.Context, st *lib.State, plan, fb *callPlan) *outcome {
	defer plan.close()
	defer fb.close() // an unused fallback's event queue must still be released
	out := c.withRetries(ctx, st, plan)
	if !out.res.OK && fb != nil && c.opts.FallbackOn[out.res.Err.Type] && ctx.Err() == nil {
		out = c.fallback.withRetries(ctx, st, fb)
	}
	return out
}

// close releases the plan's per-event queue, if it has one.
func (p *callPlan) close() {
	if p != nil && p.finish != nil {
		p.finish()
	}
}

// emit pushes the call's samples in one batch. After the VU's context is done
// nothing is pushed: a cancelled test stops emitting at once.
func (c *Client) emit(ctx context.Context, st *lib.State, out *outcome, attempt int) {
	plan := out.plan
	tm := plan.tags.Clone()
	tm.SetTag("protocol", c.opts.Protocol.Name)
	tm.SetTag("name", c.name())
	if plan.model != "" {
		tm.SetTag("model", plan.model)
	}
	if c.fallback != nil || plan.route == "fallback" {
		tm.SetTag("route", plan.route)
	}
	if out.res.RequestID != "" {
		tm.SetMetadata("request_id", out.res.RequestID)
	}
	e := &emission{
		res: out.res, status: out.status, retries: out.retries, reconnects: out.reconnects, attempt: attempt, opts: c.opts,
		gaps: c.opts.GapSamples == config.GapsPerEvent, tags: tm.Tags, meta: tm.Metadata,
		category: plan.category, regress: c.mi.root.report.regression,
	}
	metrics.PushIfNotDone(ctx, st.Samples, c.mi.metrics.samples(e))
}

// attempt is one HTTP exchange and the stream read from it.
type attempt struct {
	client  *Client
	cfg     stream.Config
	call    *stream.Call
	wd      *stream.Watchdog
	status  int
	header  http.Header
	resp    *http.Response
	res     *stream.Result
	connect time.Duration
	// reconnects is how many times a raw event stream was reopened.
	reconnects int
}

func (c *Client) attempt(parent context.Context, st *lib.State, plan *callPlan, resume *stream.Call) *attempt {
	to := plan.params.Timeouts
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	ctx, cancelTotal := context.WithTimeoutCause(ctx, to.Total, stream.CauseFor(stream.ErrTimeoutTotal))
	defer cancelTotal()

	a := &attempt{client: c, wd: stream.NewWatchdog(to, cancel), call: resume}
	defer a.wd.Stop()
	a.cfg = stream.Config{
		Spec: c.opts.Protocol, MaxEventSize: c.opts.MaxEventSize, MaxBodySize: c.opts.MaxBodySize,
		StallThreshold: c.opts.StallThreshold, CountTokens: c.count, OnEvent: plan.onEvent, Watchdog: a.wd,
		KeepGaps: plan.params.Gaps || c.opts.GapSamples == config.GapsPerEvent,
	}
	ctx = httptrace.WithClientTrace(ctx, a.trace())

	u, err := httpext.NewURL(plan.url, c.name())
	if err != nil {
		return a.failed(stream.ErrNetwork, "invalid URL: "+err.Error())
	}
	req, err := http.NewRequestWithContext(ctx, plan.method, plan.url, nil)
	if err != nil {
		return a.failed(stream.ErrNetwork, "invalid request: "+err.Error())
	}
	req.Header = plan.header.Clone()
	if resume != nil {
		resume.SetWatchdog(a.wd)
		req.Header.Set("Last-Event-ID", resume.LastEventID())
	}

	vuState := *st // a shallow copy: only the transport and the debug option differ
	vuState.Transport = tapTransport{base: st.Transport, a: a, debug: st.Options.HTTPDebug.String, log: st.Logger}
	// k6's own --http-debug dump would print the API key; ours redacts it.
	vuState.Options.HTTPDebug = null.String{}
	tm := plan.tags.Clone()
	if c.opts.Name != "" {
		tm.SetTag("name", c.opts.Name)
	}
	_, err = httpext.MakeRequest(ctx, &vuState, &httpext.ParsedHTTPRequest{
		URL: &u, Req: req, Body: requestPayload(plan.payload),
		// The request's own deadline is the total timeout plus a margin: ours
		// fires first, with a cause that classifies it.
		Timeout:      to.Total + time.Second,
		Throw:        true,
		ResponseType: httpext.ResponseTypeNone,
		Redirects:    maxRedirects(st),
		TagsAndMeta:  tm,
		ResponseCallback: func(status int) bool {
			return status >= 200 && status < 400
		},
	})
	if a.call == nil {
		a.call = stream.NewCall(a.cfg, time.Now())
	}
	if err != nil {
		cause := context.Cause(ctx)
		if parent.Err() != nil {
			cause = parent.Err()
		}
		typ := stream.Classify(err, cause)
		msg := err.Error()
		if stream.IsTLS(err) {
			msg = "TLS: " + msg
		}
		a.call.Fail(typ, msg)
	}
	a.res = a.call.Finish()
	a.res.Starved = a.wd.Starved()
	if a.resp != nil {
		a.res.ServerTimings = mergeTimings(a.res.ServerTimings, a.resp.Header)
		a.res.ServerTimings = mergeTimings(a.res.ServerTimings, a.resp.Trailer)
		if a.res.RequestID == "" {
			a.res.RequestID = requestID(a.resp.Header)
		}
	}
	return a
}

// maxRedirects is k6's maxRedirects option, with k6's default when unset.
func maxRedirects(st *lib.State) null.Int {
	if st.Options.MaxRedirects.Valid {
		return st.Options.MaxRedirects
	}
	return null.IntFrom(10)
}

func requestPayload(p []byte) *bytes.Buffer {
	if p == nil {
		return nil
	}
	return bytes.NewBuffer(p)
}

func (a *attempt) failed(t stream.ErrorType, msg string) *attempt {
	a.call = stream.NewCall(a.cfg, time.Now())
	a.call.Fail(t, msg)
	a.res = a.call.Finish()
	return a
}

// trace enforces the connect timeout and measures connection set-up.
func (a *attempt) trace() *httptrace.ClientTrace {
	var start time.Time
	return &httptrace.ClientTrace{
		GetConn: func(string) {
			start = time.Now()
			a.wd.ConnectStart()
		},
		GotConn: func(info httptrace.GotConnInfo) {
			a.wd.ConnectDone()
			if !info.Reused && !start.IsZero() {
				a.connect = time.Since(start)
			}
		},
	}
}

// tapTransport sits under k6's own tracing transport: k6 still measures and
// emits http_req_*, while the body is read and timed here.
type tapTransport struct {
	base  http.RoundTripper
	a     *attempt
	debug string // k6's --http-debug value: "", "headers" or "full"
	log   logrus.FieldLogger
}

func (t tapTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	a := t.a
	if a.call == nil {
		a.call = stream.NewCall(a.cfg, time.Now()) // t0: handed to the transport
		a.wd.Start()
	}
	if t.debug != "" && t.log != nil {
		t.log.WithField("source", "http-debug").Info(debugRequest(r, a.client, t.debug == "full"))
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if a.call.Headers.IsZero() {
		a.call.Headers = time.Now()
	}
	if t.debug != "" && t.log != nil {
		t.log.WithField("source", "http-debug").Info(debugResponse(resp, a.client))
	}
	a.status, a.header, a.resp = resp.StatusCode, resp.Header, resp
	a.wd.Bytes()
	if resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.Header.Get("Location") != "" {
		return resp, nil // k6 follows the redirect; the final response is read
	}
	resp.Body = &tapBody{a: a, body: resp.Body}
	return resp, nil
}

// tapBody reads the whole stream on k6's first Read: the parse runs in the
// goroutine that reads the socket, so arrival times are taken as bytes land.
type tapBody struct {
	a    *attempt
	body io.ReadCloser
	done bool
	err  error
}

func (b *tapBody) Read([]byte) (int, error) {
	if !b.done {
		b.done = true
		b.err = b.a.consume(b.body)
	}
	if b.err != nil {
		return 0, b.err
	}
	return 0, io.EOF
}

func (b *tapBody) Close() error { return b.body.Close() }

// consume reads a response: error statuses and non-stream bodies are
// classified; streams are framed, decoded and timed.
func (a *attempt) consume(body io.Reader) error {
	call := a.call
	if a.status >= 400 {
		msg, err := io.ReadAll(io.LimitReader(body, errorBodyLimit))
		call.Fail(statusClass(a.status), fmt.Sprintf("HTTP %d: %s", a.status, stream.Excerpt(string(msg), 300)))
		return err
	}
	if ct := a.header.Get("Content-Type"); strings.HasPrefix(strings.ToLower(ct), "text/html") {
		msg, err := io.ReadAll(io.LimitReader(body, errorBodyLimit))
		call.Fail(stream.ErrDecode, fmt.Sprintf("expected a stream, got %s (HTTP %d): %s",
			ct, a.status, stream.Excerpt(string(msg), 200)))
		return err
	}
	return call.Consume(body)
}

func statusClass(status int) stream.ErrorType {
	switch {
	case status == http.StatusTooManyRequests:
		return stream.ErrHTTP429
	case status >= 500:
		return stream.ErrHTTP5xx
	default:
		return stream.ErrHTTP4xx
	}
}

func requestID(h http.Header) string {
	for _, k := range []string{"X-Request-Id", "Request-Id", "X-Amzn-Requestid"} {
		if v := h.Get(k); v != "" {
			return stream.Excerpt(v, 128)
		}
	}
	return ""
}

// retryAfter reads Retry-After (seconds or an HTTP date) and retry-after-ms.
func retryAfter(h http.Header) (time.Duration, bool) {
	return protocol.ParseRetryAfter(h, time.Now())
}

// mergeTimings adds the Server-Timing phases of headers or trailers (several
// field lines are one list) to what the stream itself reported.
func mergeTimings(m map[string]float64, h http.Header) map[string]float64 {
	v := strings.Join(h.Values("Server-Timing"), ", ")
	if v == "" {
		return m
	}
	for k, d := range protocol.ParseServerTiming(v) {
		if m == nil {
			m = map[string]float64{}
		}
		m[k] = d
	}
	return m
}
