package llmstream

// The JS Client: its options, chat(), and the call plan — everything a call
// needs, prepared on the event loop before the call leaves it. The plan is
// run by retry.go (through attempt.go) and fanned out by outcome.go.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/grafana/sobek"
	"github.com/mstoykov/k6-taskqueue-lib/taskqueue"
	"go.k6.io/k6/js/common"
	"go.k6.io/k6/js/modules"
	"go.k6.io/k6/js/promises"
	"go.k6.io/k6/lib"
	"go.k6.io/k6/metrics"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/protocol"
	"github.com/llmstream/xk6-llmstream/internal/rxstamp"
	"github.com/llmstream/xk6-llmstream/internal/sample"
	"github.com/llmstream/xk6-llmstream/internal/selfwatch"
	"github.com/llmstream/xk6-llmstream/internal/stream"
	"github.com/llmstream/xk6-llmstream/internal/tokenizer"
)

// clientEnv is what every Client of a VU shares: the VU, the count of streams
// in flight in the process, and where finished calls go.
type clientEnv struct {
	vu     modules.VU
	active *atomic.Int64
	scope  vuScope // the VU's view of a split test, for the run record
	sinks  sinks
	// transports are the VU's HTTP transports, one per HTTP version.
	transports *transports
	// lag watches the process's own lag while calls are in flight.
	lag *selfwatch.Watcher
}

// Client is the JS Client: one endpoint, protocol and set of defaults.
type Client struct {
	env      clientEnv
	opts     *config.Client
	fallback *Client
	count    func(string) int
	redact   redactor
	// gapSampler is the process-wide sampler of gapSamples 'sampled'.
	gapSampler *sample.Sampler
	// sizes are the last answer's, to size the next one's text and gaps.
	sizes stream.Sizes
}

// newClient builds a Client from `new Client(options)`.
func newClient(env clientEnv, v sobek.Value) (*Client, error) {
	rxstamp.Prime() // receive stamps on before the first request leaves (attempt.go)
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
	// A fallback without fallbackOn means it: it takes the failures a retry
	// retries by default. A fallbackOn alone would be silently unused.
	switch {
	case fallback != nil && len(opts.FallbackOn) == 0:
		opts.FallbackOn = config.DefaultRetryOn()
	case fallback == nil && len(opts.FallbackOn) > 0:
		return nil, errors.New("Client options: fallbackOn needs a fallback (another Client) to hand the call to")
	}
	c := &Client{env: env, opts: opts, fallback: fallback, redact: newRedactor(opts)}
	if opts.Tokenizer != "none" {
		tk, err := tokenizer.Get(opts.Tokenizer)
		if err != nil {
			return nil, fmt.Errorf("Client options: %w", err)
		}
		c.count = tk.Count
	}
	if opts.GapSamples == config.GapsSampled {
		c.gapSampler = env.sinks.samplers.get(opts.GapSampleRate)
	}
	env.sinks.report.info.registerClient(opts)
	return c, nil
}

// Chat starts a streamed call and returns a Promise of its result. It never
// rejects for a failed call (the result says ok: false) unless k6's throw option is set.
func (c *Client) Chat(body sobek.Value, params sobek.Value) (*sobek.Promise, error) {
	vu := c.env.vu
	st := vu.State()
	if st == nil {
		return nil, errors.New("chat() can only be called in the VU context (default function, scenarios, setup), not in init")
	}
	plan, err := c.plan(st, body, params)
	if err != nil {
		return nil, err
	}
	p, resolve, reject := promises.New(vu)
	ctx := vu.Context()
	c.env.sinks.report.info.noteLoad(c.env.scope)
	go func() {
		defer plan.close()
		// The load a call met is the load when it started: read both counts now.
		ld := callLoad{active: int(c.env.active.Add(1)), vus: c.activeVUs()}
		c.env.lag.Acquire()
		start := time.Now()
		out := plan.run(ctx)
		out.clientLag = stream.Absent
		if lag, ok := c.env.lag.Since(start); ok {
			out.clientLag = lag
		}
		c.env.lag.Release()
		c.env.active.Add(-1)
		c.env.sinks.lagWarning.check(st.Logger, out.clientLag)
		c.env.sinks.lagWarning.noteTTFT(st.Logger, out.ttftCheck())
		// The call's times are taken; what is left (samples, report, the JS
		// result) can wait. When many calls end together, the requests that
		// follow them are waiting for a CPU too, queued behind these
		// fan-outs: a request is written by its connection's own goroutine,
		// and while it waits its TTFT grows (Result.SendWait). Yielding here
		// lets them go first.
		runtime.Gosched()
		result := out.fanOut(ctx, st.Samples, c.env.sinks, ld)
		if st.Options.Throw.Bool && !out.ok() {
			reject(fmt.Errorf("llmstream: %s", out.final().res.Err))
			return
		}
		resolve(result)
	}()
	// The script's next statements can wait; the request cannot without
	// growing its TTFT. Yield so the call's goroutine takes t0, gets its
	// connection and hands the request to the writer before the VU's
	// JavaScript runs on (and, in a wave, before the calls it starts next).
	runtime.Gosched()
	return p, nil
}

// callPlan is a call ready to run: its route, and the fallback's when the
// client has one and the primary fails in a way fallbackOn names.
type callPlan struct {
	primary, fallback *routePlan
	fallbackOn        map[stream.ErrorType]bool
}

func (p *callPlan) run(ctx context.Context) *outcome {
	return runRoutes(ctx, p.primary, p.fallback, p.fallbackOn)
}

// close releases the routes' per-event queues (an unused fallback's too).
func (p *callPlan) close() {
	p.primary.close()
	if p.fallback != nil {
		p.fallback.close()
	}
}

// plan prepares the call's routes: this client's, and its fallback's with the
// same body.
func (c *Client) plan(st *lib.State, body, params sobek.Value) (*callPlan, error) {
	primary, err := c.route(st, body, params, routePrimary)
	if err != nil {
		return nil, err
	}
	plan := &callPlan{primary: primary, fallbackOn: c.opts.FallbackOn}
	if c.fallback != nil {
		primary.info.tagRoute = true
		if plan.fallback, err = c.fallback.route(st, body, params, routeFallback); err != nil {
			plan.close()
			return nil, fmt.Errorf("fallback: %w", err)
		}
	}
	return plan, nil
}

// route prepares one route: the request, how it is retried, and what its
// samples and result say about it.
func (c *Client) route(st *lib.State, bodyV, paramsV sobek.Value, name string) (*routePlan, error) {
	rt := c.env.vu.Runtime()
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
		if _, ok := sobek.AssertFunction(onEvent); !ok && !common.IsNullish(onEvent) {
			return nil, fmt.Errorf("chat params: onEvent must be a function, got %q", onEvent.String())
		}
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
	req, err := c.request(st, bodyV, params, item)
	if err != nil {
		return nil, err
	}
	info := c.routeInfo(st, name, req.model, params, item)
	req.tags = info.tags.Clone() // k6's own http_req_* samples carry the call's tags and name
	if c.opts.Name != "" {
		req.tags.SetTag("name", c.opts.Name)
	}
	if fn, ok := sobek.AssertFunction(onEvent); ok {
		req.stream.OnEvent, req.closeEvents = c.eventQueue(fn, &info.eventLag)
	}
	if key := c.opts.Retry.IdempotencyKey; key != "" && req.header.Get(key) == "" {
		req.header.Set(key, newKey()) // one key for every attempt of this route
	}
	return &routePlan{
		info: info, retry: c.opts.Retry, reconnect: c.opts.Reconnect,
		try: func(ctx context.Context, resume *stream.Call) (*stream.Call, *stream.Result) {
			return req.try(ctx, st, resume)
		},
		close: req.close,
	}, nil
}

// request builds the HTTP request of a call: a POST of the body for chat
// protocols, a GET for a raw event stream opened with chat(null).
func (c *Client) request(st *lib.State, bodyV sobek.Value, params *config.Call, item map[string]any) (*request, error) {
	spec := c.opts.Protocol
	req := protocol.Request{Model: c.opts.Model, APIKey: c.opts.APIKey, ContinuousUsage: c.opts.ContinuousUsage}
	r := &request{
		method: http.MethodPost, timeouts: params.Timeouts, name: c.name(), redact: c.redact,
		transport: c.env.transports, http: c.opts.HTTP,
		stream: stream.Config{
			Spec: spec, MaxEventSize: c.opts.MaxEventSize, MaxBodySize: c.opts.MaxBodySize,
			StallThreshold: c.opts.StallThreshold, CountTokens: c.count, Redact: c.redact.clean,
			Sizes: &c.sizes, RequireFinishReason: c.opts.RequireFinishReason,
		},
	}
	path := params.Path
	if spec.CompleteAtEOF && common.IsNullish(bodyV) {
		req.ContinuousUsage = false
		r.method, r.model = http.MethodGet, req.Model
		r.url, r.header = joinURL(c.opts.BaseURL, path), c.headers(st, spec, req, params)
		r.header.Del("Content-Type")
		return r, nil
	}
	body, err := requestBody(bodyV)
	if err != nil {
		return nil, err
	}
	if s, ok := body["stream"].(bool); ok && !s {
		return nil, errors.New("chat(body): body.stream is false, but this client measures streamed answers " +
			"(leave stream unset; use k6/http for non-streamed calls)")
	}
	if m, ok := body["model"].(string); ok && m != "" {
		req.Model = m
	}
	if err := attachItemImages(spec.Name, body, item); err != nil { // dataset_retrieval.go
		return nil, fmt.Errorf("chat(body, {item}): %w", err)
	}
	req.PromptOnly = protocol.PromptOnly(body)
	spec.Prepare(body, req)
	if spec.MaxTokens != nil {
		r.stream.MaxTokens = spec.MaxTokens(body) // an answer that reaches it ended at the limit
	}
	if r.payload, err = json.Marshal(body); err != nil {
		return nil, fmt.Errorf("chat body: %w", err)
	}
	if path == "" {
		path = spec.Path(req)
	}
	r.url, r.model, r.header = joinURL(c.opts.BaseURL, path), req.Model, c.headers(st, spec, req, params)
	return r, nil
}

// routeInfo is what the route's samples, result and report observation say
// about it: the call's tags (k6's, the client's, the call's, the dataset
// item's) and the client's settings that shape its fan-out.
func (c *Client) routeInfo(st *lib.State, name, model string, params *config.Call, item map[string]any) *routeInfo {
	tags := st.Tags.GetCurrentValues()
	for k, v := range c.opts.Tags {
		tags.SetTag(k, v)
	}
	for k, v := range params.Tags {
		tags.SetTag(k, v)
	}
	info := &routeInfo{
		route: name, label: c.name(), protocol: c.opts.Protocol.Name, model: model,
		tagRoute: name == routeFallback, gapSamples: c.opts.GapSamples, gapSampler: c.gapSampler, slo: c.opts.SLO, resultGaps: params.ResultGaps,
		prices: c.opts.Prices, systemTags: st.Options.SystemTags,
	}
	applyItem(&tags, item, info)
	info.tags = tags
	info.category, _ = tags.Tags.Get("category")
	info.phase, info.testStart = runPhase(c.env.vu.Context(), tags.Tags)
	info.rate = arrivalRate(c.env.vu.Context(), st)
	return info
}

// applyItem tags a call with its dataset item's category and turn (unless the
// call's own tags set them) and remembers whether it has a shared prefix.
func applyItem(tags *metrics.TagsAndMeta, item map[string]any, info *routeInfo) {
	if item == nil {
		return
	}
	if cat, ok := item["category"].(string); ok && cat != "" {
		if _, set := tags.Tags.Get("category"); !set {
			tags.SetTag("category", cat)
		}
	}
	if turn, ok := item["turn"].(int64); ok && turn > 0 {
		if _, set := tags.Tags.Get("turn"); !set {
			tags.SetTag("turn", strconv.FormatInt(turn, 10))
		}
	}
	info.sharedPrefix, _ = item["sharedPrefix"].(bool)
	info.itemID, _ = item["id"].(string)
}

// requestBody accepts an object or a JSON string.
func requestBody(v sobek.Value) (map[string]any, error) {
	if common.IsNullish(v) {
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

func newKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// eventQueue delivers events to a JS callback on the event loop, in order. The
// event was timestamped before it was queued, so callbacks never touch timing.
func (c *Client) eventQueue(fn sobek.Callable, lag *atomic.Int64) (func(stream.RawEvent), func()) {
	vu := c.env.vu
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

// name labels the client in tags and results: its name, else its base URL.
func (c *Client) name() string {
	if c.opts.Name != "" {
		return c.opts.Name
	}
	return c.opts.BaseURL
}

// activeVUs is k6's count of active VUs (0 outside a k6 run, e.g. in tests).
func (c *Client) activeVUs() int {
	if es := lib.GetExecutionState(c.env.vu.Context()); es != nil {
		return int(es.GetCurrentlyActiveVUsCount()) //nolint:gosec // a VU count fits
	}
	return 0
}
