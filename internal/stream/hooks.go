package stream

// The attempt's trace hooks: the connect timer and time, the connection's
// receive stamps, the TLS handshake's own time, and when the request began
// to go out. The tap gives them to each request (traced).

import (
	"crypto/tls"
	"net/http"
	"net/http/httptrace"
	"time"
)

// hookChain is the attempt's hooks, after the client's own (prev) when they
// were chained into the client's trace. Its hooks are bound once, when it
// is made: a tap carries one, so the trace of a request costs the attempt
// no allocation beyond them.
type hookChain struct {
	tap  *Tap
	prev chainedHooks          // the client's own, called first
	own  httptrace.ClientTrace // the bound hooks: prev's, then the attempt's
	// ct is the client's trace the hooks were chained into; nil while they
	// are the request's own trace (or unused).
	ct *httptrace.ClientTrace
}

// chainedHooks are the hooks of a ClientTrace a hookChain sets.
type chainedHooks struct {
	TLSHandshakeStart func()
	TLSHandshakeDone  func(tls.ConnectionState, error)
	GetConn           func(hostPort string)
	GotConn           func(httptrace.GotConnInfo)
	WroteHeaders      func()
}

func (h *hookChain) bind(t *Tap) {
	h.tap = t
	h.own = httptrace.ClientTrace{
		TLSHandshakeStart: h.tlsHandshakeStart,
		TLSHandshakeDone:  h.tlsHandshakeDone,
		GetConn:           h.getConn,
		GotConn:           h.gotConn,
		WroteHeaders:      h.wroteHeaders,
	}
}

// The handshake's own time, on the transport's dialing goroutine: with the
// dial's, what of the connect is not this process's wait.
func (h *hookChain) tlsHandshakeStart() {
	if h.prev.TLSHandshakeStart != nil {
		h.prev.TLSHandshakeStart()
	}
	t := h.tap
	t.tlsStart.Store(int64(time.Since(sentBase)) + 1)
}

func (h *hookChain) tlsHandshakeDone(s tls.ConnectionState, err error) {
	if h.prev.TLSHandshakeDone != nil {
		h.prev.TLSHandshakeDone(s, err)
	}
	t := h.tap
	if start := t.tlsStart.Swap(0); start != 0 {
		t.call.SetUp(time.Since(sentBase) - time.Duration(start-1))
	}
}

func (h *hookChain) getConn(hostPort string) {
	if h.prev.GetConn != nil {
		h.prev.GetConn(hostPort)
	}
	h.tap.watchdog.ConnectStart()
}

func (h *hookChain) gotConn(info httptrace.GotConnInfo) {
	if h.prev.GotConn != nil {
		h.prev.GotConn(info)
	}
	t := h.tap
	t.watchdog.ConnectDone(info.Reused)
	t.call.SetArrivalClock(t.attempt.clockOf(info.Conn))
}

// The transport's writing goroutine begins the request: how long after t0
// is this process's wait to send it (Result.SendWait).
func (h *hookChain) wroteHeaders() {
	if h.prev.WroteHeaders != nil {
		h.prev.WroteHeaders()
	}
	h.tap.call.Sent(time.Now())
}

// chainInto adds the hooks to ct, after ct's own.
func (h *hookChain) chainInto(ct *httptrace.ClientTrace) {
	h.ct = ct
	h.prev = chainedHooks{
		TLSHandshakeStart: ct.TLSHandshakeStart,
		TLSHandshakeDone:  ct.TLSHandshakeDone,
		GetConn:           ct.GetConn,
		GotConn:           ct.GotConn,
		WroteHeaders:      ct.WroteHeaders,
	}
	ct.TLSHandshakeStart = h.own.TLSHandshakeStart
	ct.TLSHandshakeDone = h.own.TLSHandshakeDone
	ct.GetConn = h.own.GetConn
	ct.GotConn = h.own.GotConn
	ct.WroteHeaders = h.own.WroteHeaders
}

// traced is r with the attempt's hooks. Under a client that traces its
// requests itself (k6's tracing transport, whose trace is made afresh for
// each request, above the tap) the hooks are chained into that trace:
// httptrace.WithClientTrace would compose the two by reflection, a
// reflect.MakeFunc per shared hook and a reflected call at every hook
// call, a measurable share of a short call's CPU. The client's hooks run
// first, as they would composed.
//
// The tap's own chain serves the first trace it meets (or the requests
// without one); a hook of a request may still run on a dialing goroutine
// after the next request began, so a chain in use is never changed:
// another trace gets a chain of its own.
func (t *Tap) traced(r *http.Request) *http.Request {
	ct := httptrace.ContextClientTrace(r.Context())
	h := t.last
	switch {
	case ct == &t.hooks.own:
		return r
	case h != nil && ct != nil && (ct == &h.own || ct == h.ct):
		return r // seen before: the hooks are in its trace
	case h != nil && ct == nil && h.ct == nil:
		return r.WithContext(httptrace.WithClientTrace(r.Context(), &h.own))
	case h == nil:
		h = &t.hooks
	default:
		h = &hookChain{}
		h.bind(t)
	}
	t.last = h
	if ct == nil {
		return r.WithContext(httptrace.WithClientTrace(r.Context(), &h.own))
	}
	h.chainInto(ct)
	return r
}
