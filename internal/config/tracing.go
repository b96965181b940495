package config

// PropagatorW3C is the one trace-context propagator the client speaks: the
// W3C traceparent header, which OpenTelemetry's SDKs and gateways read by
// default. k6's own HTTP tracing names it the same way.
const PropagatorW3C = "w3c"

// Tracing sends a trace context with every call (internal/tracectx), so
// the report's slowest calls can be opened in the server's own traces.
type Tracing struct {
	Propagator string `opt:"propagator" want:"'w3c'"`
	// Sampling is the share of calls whose traceparent asks the server to
	// record its trace (the sampled flag): 0 to 1. Every call carries a
	// trace context either way, so its id is in the result.
	Sampling float64 `opt:"sampling"`
}

func (t *Tracing) setDefaults() { *t = Tracing{Propagator: PropagatorW3C, Sampling: 1} }

func (t *Tracing) check() error {
	if t.Propagator != PropagatorW3C {
		// k6's HTTP tracing also knows b3 and jaeger; this client sends only
		// traceparent, and a header the server does not read would leave
		// every trace id in the report unopenable without a word.
		return fieldErr("propagator", "must be 'w3c' (the W3C traceparent header, the only one this client sends), got %q", t.Propagator)
	}
	if !(t.Sampling >= 0 && t.Sampling <= 1) {
		return fieldErr("sampling", "must be a number between 0 and 1 (the share of calls the server is asked to trace), got %v", t.Sampling)
	}
	return nil
}
