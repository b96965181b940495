package calls

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/common"
	"go.k6.io/k6/lib"

	"github.com/llmstream/xk6-llmstream/binding/k6env"
	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/policy"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// The call plan: everything a call needs, prepared on the event loop before
// the call leaves it — its routes (this client's and its fallback's), each
// with its request, its retry policy and what its samples say about it.
// internal/policy runs the plan.

// callPlan is a call ready to run: its route, and the fallback's when the
// client has one and the primary fails in a way fallbackOn names.
type callPlan struct {
	primary, fallback *route
	fallbackOn        map[stream.ErrorType]bool
	closers           []func() // the routes' per-event queues
	hooks             planHooks
	trace             callTrace // the call's trace context (tracing.go)
	// primaryParts are the primary route's parts: a plan, its route, the
	// route's request and info are made in one allocation.
	primaryParts routeParts
	// out is the call's outcome (run), made with the plan: its first
	// attempt is the primary route's, which is the plan's, so the outcome
	// never outlives the plan, and a plan runs once.
	out outcome
}

// routeParts are a route and what it is made of, in one allocation.
type routeParts struct {
	route route
	req   request
	info  routeInfo
}

// route is one way to answer the call, and outcome the finished call: the
// policy's, with what this package keeps of each route.
type (
	route   = policy.Route[*routeInfo]
	outcome = policy.Outcome[*routeInfo]
	attempt = policy.Attempt[*routeInfo]
)

func (p *callPlan) run(ctx context.Context) *outcome {
	return policy.RunIn(ctx, &p.out, p.primary, p.fallback, p.fallbackOn)
}

// close releases the routes' per-event queues (an unused fallback's too).
func (p *callPlan) close() {
	for _, c := range p.closers {
		c()
	}
}

// planHooks is what a conversation adds to its turns' plans.
type planHooks struct {
	turn            int               // the call's turn (0: not a conversation's)
	responseHeaders func(http.Header) // sees every response's headers (the router token)
	// fallbackBody is the fallback route's body when it is not the
	// primary's (a chained history the fallback cannot resolve); nil: the same.
	fallbackBody sobek.Value
}

// plan prepares the call's routes: this client's, and its fallback's with the
// same body.
func (c *Client) plan(st *lib.State, body, params sobek.Value) (*callPlan, error) {
	return c.planWith(st, body, params, planHooks{})
}

// planWith is plan with a conversation's hooks.
func (c *Client) planWith(st *lib.State, body, params sobek.Value, hooks planHooks) (*callPlan, error) {
	plan := &callPlan{fallbackOn: c.opts.FallbackOn, hooks: hooks}
	primary, err := c.route(st, body, params, routePrimary, plan, &plan.primaryParts)
	if err != nil {
		return nil, err
	}
	plan.primary = primary
	if c.fallback != nil {
		primary.Info.tagRoute = true
		fb := body
		if hooks.fallbackBody != nil {
			fb = hooks.fallbackBody
		}
		if plan.fallback, err = c.fallback.route(st, fb, params, routeFallback, plan, new(routeParts)); err != nil {
			plan.close()
			return nil, fmt.Errorf("fallback: %w", err)
		}
	}
	return plan, nil
}

// route prepares one route: the request, how it is retried, and what its
// samples and result say about it. Its per-event queue joins the plan's
// closers. parts is where the route is made.
func (c *Client) route(st *lib.State, bodyV, paramsV sobek.Value, name string, plan *callPlan,
	parts *routeParts) (*route, error) {
	rt := c.env.VU.Runtime()
	po, err := k6env.ExportObject(paramsV, "chat params")
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
	params := c.noParams // read only: shared by every call without params
	if len(po) > 0 {
		if params, err = config.ParseCall(po, c.opts); err != nil {
			return nil, err
		}
	}
	req := &parts.req
	if err := c.request(st, bodyV, params, item, req); err != nil {
		return nil, err
	}
	info := c.routeInfo(st, name, req.model, params, item, "", &parts.info)
	req.trace, info.TraceID = c.traceRoute(req.header, &plan.trace)
	info.RequestBytes = int64(len(req.payload))
	info.Turn, req.responseHeaders = plan.hooks.turn, plan.hooks.responseHeaders
	req.tags = info.tags.Clone() // k6's own http_req_* samples carry the call's tags and name
	if c.opts.Name != "" {
		req.tags.SetTag("name", c.opts.Name)
	}
	if fn, ok := sobek.AssertFunction(onEvent); ok {
		var closeEvents func()
		req.stream.OnEvent, closeEvents = c.eventQueue(fn, &info.eventLag)
		plan.closers = append(plan.closers, closeEvents)
	}
	if key := c.opts.Retry.IdempotencyKey; key != "" && req.header.Get(key) == "" {
		req.header = req.header.Clone() // shared with other calls (header_template.go)
		req.header.Set(key, newKey())   // one key for every attempt of this route
	}
	parts.route = route{
		Info: info, Retry: c.opts.Retry, Reconnect: c.opts.Reconnect, Prices: c.opts.Prices,
		Try: func(ctx context.Context, resume *stream.Call) (*stream.Call, *stream.Result) {
			return req.try(ctx, st, resume)
		},
	}
	return &parts.route, nil
}

// routeInfo builds a route's info for a call with the given params and
// dataset item, made in info; op, when given, is the op tag of an embed or
// rerank call, set over the others before the tags' Get is taken (a tag
// set changed after it would get a Get of its own at every call).
func (c *Client) routeInfo(st *lib.State, name, model string, params *config.Call, item map[string]any,
	op string, info *routeInfo) *routeInfo {
	tags := st.Tags.GetCurrentValues()
	for k, v := range c.opts.Tags {
		tags.SetTag(k, v)
	}
	for k, v := range params.Tags {
		tags.SetTag(k, v)
	}
	*info = routeInfo{
		Origin: record.Origin{
			Route: name, Name: c.name(), Protocol: c.opts.Protocol.Name, Model: model,
			GapSamples: c.opts.GapSamples, ResultGaps: params.ResultGaps,
		},
		tagRoute: name == routeFallback, gapSampler: c.gapSampler, slo: c.opts.SLO,
		systemTags: st.Options.SystemTags, tagMemo: &c.tagMemo,
	}
	applyItem(&tags, item, info)
	if op != "" {
		tags.SetTag("op", op)
	}
	info.tags, info.tagGet = tags, c.tagGetter.of(tags.Tags)
	info.Category, _ = tags.Tags.Get("category")
	info.Scenario, _ = tags.Tags.Get("scenario")
	info.Phase, info.TestStart = k6env.RunPhase(c.env.VU.Context(), tags.Tags)
	info.Rate = k6env.ArrivalRate(c.env.VU.Context(), st)
	return info
}
