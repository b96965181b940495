package calls

// The plan of an embed or rerank call: its routes (this client's and its
// fallback's), each a request in its own API's wire format, run by
// internal/policy like a chat call's, so retries, backoff, Retry-After and
// fallback decide the same way. An attempt is one internal/embed exchange
// through the VU's transport (k6's dialer and TLS settings, the client's
// HTTP version); its figures are kept beside the stream.Result the policy
// reads, and the final one becomes the call record's Retrieval.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"time"

	"github.com/grafana/sobek"
	"go.k6.io/k6/lib"
	"go.k6.io/k6/metrics"

	"github.com/llmstream/xk6-llmstream/binding/k6env"
	"github.com/llmstream/xk6-llmstream/binding/load"
	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/embed"
	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/policy"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/schedule"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// retrievalOp is what the call asks, before a route's client shapes it:
// exactly one of embed and rerank is set.
type retrievalOp struct {
	op      string // embed.OpEmbed or embed.OpRerank
	apiName string // the call's api, "" for the client's default
	keep    bool   // embed: keep the vectors' values
	embed   *embed.Request
	rerank  *embed.RerankRequest
}

// retrievalPlan is the call ready to run, and then the call running: it is
// the task its worker runs (workers.go), and settles its Promise on the
// event loop. figures holds each attempt's figures by the result the policy
// saw (attempts run one after another, on the call's goroutine), with room
// for the first; primaryParts is where the primary route is made. One
// allocation for what were the plan, its figures' map, its route's parts
// and the closures that ran and settled the call.
type retrievalPlan struct {
	primary, fallback *route
	fallbackOn        map[stream.ErrorType]bool
	figures           []attemptFigures
	firstFigures      [1]attemptFigures
	primaryParts      retrievalParts
	trace             callTrace // the call's trace context (tracing.go)

	// The call off the loop: what it runs with, and what it hands its
	// outcome and record to (the Promise's settle, resolve and reject).
	c               *Client
	st              *lib.State
	ctx             context.Context
	due             time.Time
	from            *schedule.Schedule
	settle          func(func() error)
	rt              *sobek.Runtime
	resolve, reject func(any) error
	out             *outcome
	rec             *record.Call
}

// attemptFigures are an attempt's figures and the result the policy saw.
type attemptFigures struct {
	res *stream.Result
	fig *embed.Result
}

// retrievalParts are a route of a retrieval call and its info, made together.
type retrievalParts struct {
	route route
	info  routeInfo
}

// figuresOf is the figures of the attempt whose result the policy saw as res.
func (p *retrievalPlan) figuresOf(res *stream.Result) *embed.Result {
	for i := len(p.figures) - 1; i >= 0; i-- {
		if p.figures[i].res == res {
			return p.figures[i].fig
		}
	}
	return nil
}

// startRetrieval plans the call on the event loop, runs it off the loop and
// resolves the Promise with its result, as Chat does.
func (c *Client) startRetrieval(op *retrievalOp, paramsV sobek.Value) (*sobek.Promise, error) {
	vu := c.env.VU
	st := vu.State()
	plan := &retrievalPlan{fallbackOn: c.opts.FallbackOn, c: c, st: st}
	plan.figures = plan.firstFigures[:0]
	var err error
	if plan.primary, err = c.retrievalRoute(st, op, paramsV, routePrimary, plan, &plan.primaryParts); err != nil {
		return nil, err
	}
	if c.fallback != nil {
		plan.primary.Info.tagRoute = true
		if plan.fallback, err = c.fallback.retrievalRoute(st, op, paramsV, routeFallback, plan, new(retrievalParts)); err != nil {
			return nil, fmt.Errorf("fallback: %w", err)
		}
	}
	plan.rt = vu.Runtime()
	var p *sobek.Promise
	p, plan.resolve, plan.reject = plan.rt.NewPromise()
	plan.settle = vu.RegisterCallback()
	plan.ctx = vu.Context()
	c.noteCallStart(st)
	plan.due, plan.from = c.env.Due.TakeFrom() // as in Chat: the first call after Schedule.next() is the credit's send
	c.env.Workers.runTask(plan)                // as in Chat: a goroutine that has run a call keeps its stack
	runtime.Gosched()
	return p, nil
}

// run is the call, on a worker goroutine.
func (p *retrievalPlan) run() {
	c, st, ctx := p.c, p.st, p.ctx
	ld := callLoad{active: int(c.env.Active.Add(1)), vus: c.activeVUs(), due: p.due}
	c.env.Lag.Acquire()
	start := time.Now()
	out := policy.Run(ctx, p.primary, p.fallback, p.fallbackOn)
	if lag, ok := c.env.Lag.Since(start); ok {
		out.ClientLag = measure.Of(lag)
	}
	c.env.Lag.Release()
	c.env.Active.Add(-1)
	c.env.Sinks.LagWarning.Check(st.Logger, out.ClientLag.Or(0))
	runtime.Gosched() // as in Chat: the requests that follow go first
	rec := fanOutRetrieval(ctx, out, p, st.Samples, c.env.Sinks, ld)
	load.AfterScheduledCall(ctx, p.from, c.env.Sinks.Metrics, st)
	p.out, p.rec = out, rec
	p.settle(p.settleCall)
}

// settleCall settles the call's Promise with its result, on the event loop,
// as Chat does.
func (p *retrievalPlan) settleCall() error {
	if p.st.Options.Throw.Bool && !p.out.OK() {
		return p.reject(fmt.Errorf("llmstream: %s", p.out.Final().Result.Err))
	}
	return p.resolve(jsResult(p.rt, p.rec))
}

// retrievalRoute prepares one route of the call, made in parts: its request
// in the API of this client (or the call's api), its tags and its retry
// policy.
func (c *Client) retrievalRoute(st *lib.State, op *retrievalOp, paramsV sobek.Value, name string, plan *retrievalPlan,
	parts *retrievalParts,
) (*route, error) {
	where := "embed params"
	if op.op == embed.OpRerank {
		where = "rerank params"
	}
	po, err := k6env.ExportObject(paramsV, where)
	if err != nil {
		return nil, err
	}
	var item map[string]any
	path := ""
	if po != nil {
		for _, k := range []string{"onEvent", "gaps"} {
			if _, ok := po[k]; ok {
				return nil, fmt.Errorf("%s: %s is for streamed calls; an %s call has no events or gaps", where, k, op.op)
			}
		}
		if it, ok := po["item"]; ok {
			if item, ok = it.(map[string]any); !ok {
				return nil, fmt.Errorf("%s: item must be a dataset item (an object)", where)
			}
			delete(po, "item")
		}
		path, _ = po["path"].(string)
	}
	params := c.noParams // read only: shared by every call without params
	if len(po) > 0 {
		if params, err = config.ParseCall(po, c.opts); err != nil {
			return nil, fmt.Errorf("%s: %w", op.op, err)
		}
	}
	x, model, apiName, finish, err := c.retrievalExchange(st, op, params, path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op.op, err)
	}
	info := c.routeInfo(st, name, model, params, item, op.op, &parts.info)
	info.Protocol = apiName // the wire format the call spoke
	var trace *requestTrace
	trace, info.TraceID = c.traceRoute(x.Header, &plan.trace)
	key := c.opts.Retry.IdempotencyKey
	if key != "" && x.Header.Get(key) == "" {
		x.Header = x.Header.Clone() // shared with other calls (header_template.go)
		x.Header.Set(key, newKey()) // one key for every attempt of this route
	}
	parts.route = route{
		Info: info, Retry: c.opts.Retry, Prices: nil, // no reconnection: nothing to resume
		Try: func(ctx context.Context, _ *stream.Call) (*stream.Call, *stream.Result) {
			if lim := st.RPSLimit; lim != nil {
				// k6's rps option, waited on as k6's request path does for
				// chat; a wait cut short leaves ctx done, and Do fails at
				// once with its cause.
				_ = lim.Wait(ctx)
			}
			r := finish(attemptExchange(x, trace).Do(ctx))
			if r.End.IsZero() { // failed before the request reached the transport
				r.End = time.Now()
			}
			if r.Start.IsZero() {
				r.Start = r.End
			}
			res := r.StreamResult()
			plan.figures = append(plan.figures, attemptFigures{res: res, fig: r})
			return nil, res
		},
	}
	return &parts.route, nil
}

// attemptExchange is the exchange of one attempt: x itself, whose headers
// calls in flight share and Do sends without a copy, or with a traceparent
// an exchange of its own with its own headers (each attempt is a child
// span, and an earlier attempt's request may still be read).
func attemptExchange(x *embed.Exchange, trace *requestTrace) *embed.Exchange {
	if trace == nil {
		return x
	}
	own := *x
	own.Header = x.Header.Clone()
	trace.set(own.Header)
	return &own
}

// retrievalExchange shapes the request of one route: URL, headers and body
// in the API's format, and how its answer is read.
func (c *Client) retrievalExchange(st *lib.State, op *retrievalOp, params *config.Call, path string) (
	x *embed.Exchange, model, apiName string, finish func(*embed.Attempt) *embed.Result, err error,
) {
	w := c.lastWire.w
	if c.lastWire.op != op { // the same body as the last call's is the same request (body_memo.go)
		if w, err = c.wire(op); err != nil {
			return nil, "", "", nil, err
		}
		c.lastWire.op, c.lastWire.w = op, w
	}
	if path == "" {
		path = w.path
	}
	key := headerKey{api: w.headerName} // the API's headers are its name's, with the client's key
	h := c.callHeaders(st, params, key, func(h http.Header) { w.headers(h, c.opts.APIKey) })
	u := c.joinURL(path)
	red := c.callRedactor(params, u)
	x = &embed.Exchange{
		Transport: c.env.Transports.getWhole(st.Transport, st.Dialer, c.opts.HTTP),
		URL:       u, Header: h, Body: w.body,
		Timeouts: params.Timeouts, MaxBodySize: c.opts.MaxBodySize, Redact: c.cleaner.of(red),
	}
	if st.CookieJar != nil { // not a nil *cookiejar.Jar in the interface
		x.Jar = st.CookieJar
	}
	x.DumpRequest, x.DumpResponse = httpDebug(st, red) //nolint:bodyclose // dump hooks, no response
	return x, w.model, w.api, w.finish, nil
}

// retrievalWire is the call in one API's wire format: an embed and a rerank
// differ only in their request type and how their answer is read.
type retrievalWire struct {
	body             []byte
	path, model, api string
	headerName       string // what its headers are kept by: the kind of call and its API (header_template.go)
	headers          func(h http.Header, apiKey string)
	finish           func(*embed.Attempt) *embed.Result
}

// wire renders the call's request (with the client's model when
// the call names none) in the API this client speaks, or the call's api.
func (c *Client) wire(op *retrievalOp) (*retrievalWire, error) {
	var (
		w   retrievalWire
		err error
	)
	switch {
	case op.embed != nil:
		req := *op.embed
		req.Model = cmp.Or(req.Model, c.opts.Model)
		api, aerr := embedAPI(op.apiName, c.opts.Protocol.Name)
		if aerr != nil {
			return nil, aerr
		}
		w = retrievalWire{path: api.Path(&req), model: req.Model, api: api.Name, headers: api.Headers,
			finish: func(a *embed.Attempt) *embed.Result { return embed.FinishEmbed(a, api, &req, op.keep, c.count) }}
		w.body, err = api.Body(&req)
	case op.rerank != nil:
		req := *op.rerank
		req.Model = cmp.Or(req.Model, c.opts.Model)
		api, aerr := rerankAPI(op.apiName)
		if aerr != nil {
			return nil, aerr
		}
		w = retrievalWire{path: api.Path(&req), model: req.Model, api: api.Name, headers: api.Headers,
			finish: func(a *embed.Attempt) *embed.Result { return embed.FinishRerank(a, api, &req, c.count) }}
		w.body, err = api.Body(&req)
	default:
		return nil, errors.New("neither embed nor rerank") // unreachable: Embed and Rerank set one
	}
	if err != nil {
		return nil, err //nolint:wrapcheck // names the option
	}
	w.headerName = op.op + " " + w.api
	return &w, nil
}

// fanOutRetrieval is fanOut for an embed or rerank call: its record is a
// call of record.RetrievalFigures, judged by the SLO's e2e limit alone.
func fanOutRetrieval(ctx context.Context, o *outcome, plan *retrievalPlan,
	out chan<- metrics.SampleContainer, s Sinks, ld callLoad,
) *record.Call {
	rec := callRecord(o, ld)
	rec.Retrieval = plan.figuresOf(o.Final().Result)
	rec.RequestBytes = rec.Retrieval.RequestBytes
	rec.Stopped = o.Canceled || ctx.Err() != nil
	if !rec.Stopped {
		if ok, judged := policy.MeetsDuration(o.Final().Route.Info.slo, rec.Retrieval.Duration); judged {
			rec.Goodput = record.VerdictOf(rec.OK && ok)
		}
		metrics.PushIfNotDone(ctx, out, callSamples(s.Metrics, o, rec))
	}
	s.Report.Intake().Add(rec)
	return rec
}

// embedAPI is the embeddings API a client uses: the call's api, else the one
// its protocol's servers serve.
func embedAPI(name, protocol string) (*embed.API, error) {
	if name == "" {
		n, ok := embed.ForProtocol(protocol)
		if !ok {
			return nil, fmt.Errorf("protocol %q has no embeddings endpoint: give the call's api (%s) or use another client",
				protocol, strings.Join(embed.Names(), ", "))
		}
		name = n
	}
	return embed.Lookup(name) //nolint:wrapcheck // names the API and the known ones
}

// rerankAPI is the rerank API a call uses: its api, else the /v1/rerank
// shape vLLM, Cohere and Jina share.
func rerankAPI(name string) (*embed.RerankAPI, error) {
	if name == "" {
		name = "cohere"
	}
	return embed.LookupRerank(name) //nolint:wrapcheck // names the API and the known ones
}
