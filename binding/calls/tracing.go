package calls

import (
	"net/http"

	"github.com/llmstream/xk6-llmstream/internal/tracectx"
)

// Trace context (the client's tracing option): one trace per call, one
// client span per HTTP request. A call is what the user waits for, so its
// retries, its fallback and a reopened raw stream are requests of the same
// trace: the server-side trace of a slow call then shows every try, and
// the trace id in the result and the report is the call's. Each request
// still gets its own parent id, as an OpenTelemetry HTTP client gives each
// request its own span, and the sampling decision is drawn once per trace.

// callTrace is the trace context a call's routes share, drawn by the first
// route whose client traces.
type callTrace struct {
	ctx   tracectx.Context
	drawn bool
}

// requestTrace is what one route's requests send: the call's trace with a
// fresh parent id per request.
type requestTrace struct {
	gen *tracectx.Generator
	ctx tracectx.Context
}

// traceRoute sets up the trace context of a route whose requests send
// header h: what gives each request its traceparent (nil when none is to
// be added), and the trace id they carry ("" when none is known). A
// traceparent the client's or the call's headers set is the script's own
// trace: it is sent as it is, and its trace id is the call's when it is a
// valid one.
func (c *Client) traceRoute(h http.Header, call *callTrace) (*requestTrace, string) {
	if c.tracer == nil {
		return nil, ""
	}
	if own := h.Get(tracectx.Header); own != "" {
		if tc, ok := tracectx.Parse(own); ok {
			return nil, tc.TraceIDHex()
		}
		return nil, ""
	}
	if !call.drawn {
		*call = callTrace{ctx: c.tracer.Next(), drawn: true}
	}
	return &requestTrace{gen: c.tracer, ctx: call.ctx}, call.ctx.TraceIDHex()
}

// set gives one request its traceparent.
func (t *requestTrace) set(h http.Header) {
	if t != nil {
		h.Set(tracectx.Header, t.gen.Child(t.ctx).String())
	}
}
