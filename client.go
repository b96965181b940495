package llmstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/grafana/sobek"
	"github.com/mstoykov/k6-taskqueue-lib/taskqueue"
	"go.k6.io/k6/js/promises"
	"go.k6.io/k6/lib"
	"go.k6.io/k6/metrics"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/protocol"
	"github.com/llmstream/xk6-llmstream/internal/stream"
	"github.com/llmstream/xk6-llmstream/internal/tokenizer"
)

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
	mi.registerClient(c)
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
	// itemID is the dataset item's id (params.item), for paired comparisons.
	itemID string
	// phase is setup/teardown for calls made there; testStart when k6 started the test.
	phase     string
	testStart time.Time
	rate      float64 // the arrival rate of an arrival-rate scenario at the call's start
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
	plan.phase, plan.testStart = c.mi.runPhase(plan.tags.Tags)
	plan.rate = c.mi.arrivalRate(st)
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
	p.itemID, _ = item["id"].(string)
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

// close releases the plan's per-event queue, if it has one.
func (p *callPlan) close() {
	if p != nil && p.finish != nil {
		p.finish()
	}
}

func (c *Client) name() string {
	if c.opts.Name != "" {
		return c.opts.Name
	}
	return c.opts.BaseURL
}

// activeVUs is k6's count of active VUs (0 outside a k6 run, e.g. in tests).
func (c *Client) activeVUs() int {
	if es := lib.GetExecutionState(c.mi.vu.Context()); es != nil {
		return int(es.GetCurrentlyActiveVUsCount()) //nolint:gosec // a VU count fits
	}
	return 0
}
