// Package tracectx joins a call to the server's own traces: a W3C Trace
// Context `traceparent` header per call (https://www.w3.org/TR/trace-context/),
// so a team that runs OpenTelemetry on its gateway and engine can open the
// server-side trace of the slowest calls the report names. k6's own HTTP
// module offers the same with its tracing instrumentation and the `w3c`
// propagator; this is that convention for streamed calls.
package tracectx

import (
	crand "crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
)

// Header is the header the propagator sends.
const Header = "traceparent"

// Context is one call's trace context.
type Context struct {
	TraceID [16]byte
	SpanID  [8]byte // the parent id the server's spans hang under
	Sampled bool
}

// String is the traceparent value: version 00, the ids in lowercase hex, the
// sampled flag.
func (c Context) String() string {
	var b [55]byte
	copy(b[:3], "00-")
	hex.Encode(b[3:35], c.TraceID[:])
	b[35] = '-'
	hex.Encode(b[36:52], c.SpanID[:])
	copy(b[52:], "-00")
	if c.Sampled {
		b[54] = '1'
	}
	return string(b[:])
}

// TraceIDHex is the trace id as a tracing backend shows it.
func (c Context) TraceIDHex() string { return hex.EncodeToString(c.TraceID[:]) }

// Generator makes fresh trace contexts: random ids (never all zero, which
// the spec forbids), each call sampled with probability Sampling. Safe for
// concurrent use.
type Generator struct {
	sampling float64
	mu       sync.Mutex
	rng      *rand.Rand
}

// NewGenerator seeds a generator from the system's randomness, so two k6
// instances never hand out the same ids.
func NewGenerator(sampling float64) (*Generator, error) {
	if !(sampling >= 0 && sampling <= 1) {
		return nil, errors.New("sampling must be between 0 and 1")
	}
	var seed [32]byte
	if _, err := crand.Read(seed[:]); err != nil {
		return nil, err
	}
	return &Generator{sampling: sampling, rng: rand.New(rand.NewChaCha8(seed))}, nil // #nosec G404 -- ids need uniqueness, not secrecy; seeded from crypto/rand
}

// Next is a fresh context for one call.
func (g *Generator) Next() Context {
	g.mu.Lock()
	defer g.mu.Unlock()
	var c Context
	for c.TraceID == [16]byte{} {
		binary.BigEndian.PutUint64(c.TraceID[:8], g.rng.Uint64())
		binary.BigEndian.PutUint64(c.TraceID[8:], g.rng.Uint64())
	}
	for c.SpanID == [8]byte{} {
		binary.BigEndian.PutUint64(c.SpanID[:], g.rng.Uint64())
	}
	c.Sampled = g.sampling >= 1 || g.sampling > 0 && g.rng.Float64() < g.sampling
	return c
}

// Child is c with a fresh parent id: another request of the same trace (a
// retry, a fallback, a reopened stream) is another client span, under the
// same trace id and sampling decision.
func (g *Generator) Child(c Context) Context {
	g.mu.Lock()
	defer g.mu.Unlock()
	prev := c.SpanID
	for c.SpanID == [8]byte{} || c.SpanID == prev {
		binary.BigEndian.PutUint64(c.SpanID[:], g.rng.Uint64())
	}
	return c
}

// Parse reads a traceparent a script set itself, so its trace id still
// reaches the result and the report. ok is false for a value the spec
// would have a server ignore (wrong length, not hex, version ff, zero ids).
func Parse(v string) (c Context, ok bool) {
	v = strings.TrimSpace(v)
	// Version 00 is exactly 55 characters; a later version may append fields.
	if len(v) < 55 || v[2] != '-' || v[35] != '-' || v[52] != '-' || len(v) > 55 && v[55] != '-' {
		return Context{}, false
	}
	var ver, flags [1]byte
	if _, err := hex.Decode(ver[:], []byte(v[:2])); err != nil || ver[0] == 0xff || ver[0] == 0 && len(v) != 55 {
		return Context{}, false
	}
	if !lowerHex(v[:55]) {
		return Context{}, false
	}
	if _, err := hex.Decode(c.TraceID[:], []byte(v[3:35])); err != nil || c.TraceID == [16]byte{} {
		return Context{}, false
	}
	if _, err := hex.Decode(c.SpanID[:], []byte(v[36:52])); err != nil || c.SpanID == [8]byte{} {
		return Context{}, false
	}
	if _, err := hex.Decode(flags[:], []byte(v[53:55])); err != nil {
		return Context{}, false
	}
	c.Sampled = flags[0]&1 == 1
	return c, true
}

// lowerHex: the spec allows only lowercase hex digits (and the dashes).
func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch != '-' && (ch < '0' || ch > '9') && (ch < 'a' || ch > 'f') {
			return false
		}
	}
	return true
}
