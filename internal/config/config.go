// Package config reads the options a script passes to the module: new
// Client(...), client.chat(body, params), Dataset, Arrivals and report(). It
// works on the plain Go values a JS object exports to (map[string]any, []any,
// string, int64, float64, bool), so it is tested without a JS runtime. One
// decoder (Decode) applies one rule to all of them: exact names, unknown names
// listed, wrong types named, durations as '3s' or milliseconds, null = unset.
package config

import (
	"strings"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/protocol"
	"github.com/llmstream/xk6-llmstream/internal/redact"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// Gap sampling modes: how many llm_inter_token_gap samples a request emits.
const (
	GapsSampled    = "sampled" // every k-th gap, process-wide, at most GapSampleRate a second
	GapsPerEvent   = "event"   // one per gap: exact distributions, memory grows with tokens
	GapsPerRequest = "request" // one per request: the request's mean gap
	GapsOff        = "off"
)

// HTTP versions a client speaks (the http option).
const (
	HTTPAuto = "auto" // k6's own choice: HTTP/2 when TLS negotiates it, else HTTP/1.1
	HTTP1    = "1.1"  // HTTP/1.1 only, also over TLS
	HTTP2    = "2"    // HTTP/2 only: over TLS, or cleartext with prior knowledge (h2c)
)

// Defaults, documented in docs/client.md.
const (
	DefaultConnectTimeout    = 10 * time.Second
	DefaultFirstTokenTimeout = 60 * time.Second
	DefaultIdleTimeout       = 60 * time.Second
	DefaultTotalTimeout      = 10 * time.Minute
	DefaultStallThreshold    = 500 * time.Millisecond
	DefaultProtocol          = "openai-chat"
	// DefaultGapSampleRate caps the llm_inter_token_gap samples a process
	// sends to k6 with gapSamples 'sampled': k6 keeps every Trend sample (8
	// bytes each, for its summary and thresholds), so this bounds what the
	// gaps cost it to 1.8 million samples, about 14 MB, an hour, while k6's
	// percentiles of the gaps stay unbiased: a one-minute run still gives
	// them 30 000 samples, plenty for a P99.
	DefaultGapSampleRate = 500
)

// Client is a validated new Client(...) options object.
type Client struct {
	BaseURL  string            `opt:"baseURL"`
	Protocol *protocol.Spec    `opt:"protocol"`
	Model    string            `opt:"model"`
	APIKey   string            `opt:"apiKey"` //nolint:gosec // carried, never printed
	Name     string            `opt:"name"`
	Path     string            `opt:"path"`
	Headers  map[string]string `opt:"headers"`
	Tags     map[string]string `opt:"tags"`
	Timeouts stream.Timeouts   `opt:"timeouts" want:"an object like {connect: '3s', firstToken: '10s', idle: '30s', total: '10m'}"` //nolint:lll
	// GapSamples is how many llm_inter_token_gap samples a call emits (Gaps…).
	GapSamples string `opt:"gapSamples"`
	// GapSampleRate is the process-wide cap, in samples per second, of
	// gapSamples 'sampled'.
	GapSampleRate   int           `opt:"gapSampleRate,positive"`
	StallThreshold  time.Duration `opt:"stallThreshold"`
	SLO             SLO           `opt:"slo" want:"an object like {ttft: '800ms', tpot: '50ms', e2e: '30s'}"`
	ContinuousUsage bool          `opt:"continuousUsage"`
	Tokenizer       string        `opt:"tokenizer"` // "" = count tokens from events when usage is missing
	MaxEventSize    int           `opt:"maxEventSize,positive"`
	MaxBodySize     int64         `opt:"maxBodySize,positive"`
	Retry           Retry         `opt:"retry" want:"an object like {attempts: 3, on: ['http_429', 'http_5xx']}"`
	// Fallback is the script's fallback Client, a JS object only the root
	// package knows; it checks and takes it.
	Fallback   any        `opt:"fallback"`
	FallbackOn ErrorTypes `opt:"fallbackOn"`
	ResultGaps bool       `opt:"gaps"` // result.gaps by default
	Reconnect  Reconnect  `opt:"reconnect" want:"an object like {attempts: 3, delay: '1s'}"`
	// Prices, when set, give every call a cost (llm_cost, result.cost, the report).
	// HTTP is the HTTP version: HTTPAuto, HTTP1 or HTTP2.
	HTTP   string  `opt:"http" want:"'auto', '1.1' or '2'"`
	Prices *Prices `opt:"prices" want:"an object like {input: 2.5, cachedInput: 1.25, output: 10, currency: 'USD'}"`

	// RequireFinishReason is the strict end rule: an answer whose server
	// named no finish is truncated (docs/protocols.md).
	RequireFinishReason bool `opt:"requireFinishReason"`

	// ServerMetrics, when set, reads the servers' own Prometheus endpoints
	// (the engine's, a GPU exporter's, more replicas') while the test runs
	// (config/servermetrics.go).
	ServerMetrics ServerMetricsList `opt:"serverMetrics" want:"an object like {url: 'http://vllm:8000/metrics', interval: '1s'} or a list of them"`

	// Tracing, when set, sends a W3C trace context with every call
	// (config/tracing.go).
	Tracing *Tracing `opt:"tracing" want:"an object like {propagator: 'w3c', sampling: 1}"`
}

// SLO is the per-request objective behind llm_goodput; an absent field is
// not checked (zero), and a given 0 is refused: no call can meet it, and
// reading it as "not checked" would judge calls by less than the script says.
type SLO struct {
	TTFT time.Duration `opt:"ttft,positive" want:"a duration above 0 like '800ms' (leave it out for no objective on it)"`
	TPOT time.Duration `opt:"tpot,positive" want:"a duration above 0 like '800ms' (leave it out for no objective on it)"`
	E2E  time.Duration `opt:"e2e,positive" want:"a duration above 0 like '800ms' (leave it out for no objective on it)"`
}

// Set reports whether any objective is given.
func (s SLO) Set() bool { return s.TTFT > 0 || s.TPOT > 0 || s.E2E > 0 }

// Backoff is the wait between retry attempts: min(max, base·2^(n-1)) ± jitter.
type Backoff struct {
	Base   time.Duration `opt:"base"`
	Max    time.Duration `opt:"max"`
	Jitter float64       `opt:"jitter"` // fraction of the wait, 0..1
}

func (b *Backoff) check() error {
	if b.Jitter < 0 || b.Jitter > 1 {
		return fieldErr("jitter", "must be a number between 0 and 1, got %v", b.Jitter)
	}
	return nil
}

// maxAttempts bounds retry.attempts: more is a typo, not a policy.
const maxAttempts = 100

// Retry is the opt-in retry policy.
type Retry struct {
	Attempts          int        `opt:"attempts,positive"` // total attempts, 1 = no retry
	On                ErrorTypes `opt:"on"`
	Backoff           Backoff    `opt:"backoff" want:"an object like {base: '200ms', max: '5s', jitter: 0.2}"`
	RespectRetryAfter bool       `opt:"respectRetryAfter"`
	// IdempotencyKey is a header name; "" = none; true in a script means "Idempotency-Key".
	IdempotencyKey string `opt:"idempotencyKey" true:"Idempotency-Key" want:"true or a header name"`
	AfterOutput    bool   `opt:"afterOutput"` // also retry when part of an answer was received
}

// setDefaults is the policy a script gets by writing retry: {...}.
func (r *Retry) setDefaults() {
	*r = Retry{RespectRetryAfter: true, // Attempts stays 0 until given: check requires it
		Backoff: Backoff{Base: 200 * time.Millisecond, Max: 5 * time.Second, Jitter: 0.2},
		On:      DefaultRetryOn()}
}

// DefaultRetryOn is the error types a retry retries unless told otherwise:
// the failures that came before any answer and that another try (or another
// server) may not meet. A fallback without fallbackOn hands over on them.
func DefaultRetryOn() ErrorTypes {
	return ErrorTypes{
		stream.ErrHTTP429: true, stream.ErrHTTP5xx: true, stream.ErrNetwork: true,
		stream.ErrTimeoutConnect: true, stream.ErrTimeoutFirstToken: true,
	}
}

func (r *Retry) check() error {
	if r.Attempts == 0 {
		// retry: {on: [...]} alone would never retry: 1 attempt is the default
		return fieldErr("attempts", "is required: the attempts in all, e.g. 3 (1 = no retry)")
	}
	if r.Attempts > maxAttempts {
		return fieldErr("attempts", "must be at most %d, got %d", maxAttempts, r.Attempts)
	}
	return nil
}

// Reconnect reopens a broken raw event stream with Last-Event-ID (protocol sse).
type Reconnect struct {
	Attempts int           `opt:"attempts,positive"`
	Delay    time.Duration `opt:"delay"` // used when the server sent no retry: field
}

func (r *Reconnect) setDefaults() { *r = Reconnect{Delay: time.Second} }

// ParseClient validates new Client(options).
func ParseClient(o map[string]any) (*Client, error) {
	spec, err := protocol.Lookup(DefaultProtocol)
	if err != nil {
		return nil, err
	}
	c := &Client{
		Protocol: spec,
		Timeouts: stream.Timeouts{
			Connect: DefaultConnectTimeout, FirstToken: DefaultFirstTokenTimeout,
			Idle: DefaultIdleTimeout, Total: DefaultTotalTimeout,
		},
		GapSamples:     GapsSampled,
		GapSampleRate:  DefaultGapSampleRate,
		HTTP:           HTTPAuto,
		StallThreshold: DefaultStallThreshold,
		Retry:          Retry{Attempts: 1},
	}
	if o == nil {
		o = map[string]any{} // still checked: baseURL is required
	}
	if err := Decode("Client options", o, c); err != nil {
		return nil, err
	}
	return c, nil
}

// check runs once the options are read: what no single field can say alone.
func (c *Client) check() error {
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	if c.BaseURL == "" {
		return fieldErr("baseURL", "is required (e.g. 'http://127.0.0.1:8000/v1')")
	}
	if !strings.HasPrefix(c.BaseURL, "http://") && !strings.HasPrefix(c.BaseURL, "https://") {
		return fieldErr("baseURL", "must start with http:// or https://, got %q", redact.CleanURL(c.BaseURL))
	}
	if err := oneOf(c.GapSamples, []string{GapsSampled, GapsPerEvent, GapsPerRequest, GapsOff}); err != nil {
		return under("gapSamples", err)
	}
	if err := oneOf(c.HTTP, []string{HTTPAuto, HTTP1, HTTP2}); err != nil {
		return under("http", err)
	}
	if c.Reconnect != (Reconnect{}) && !c.Protocol.CompleteAtEOF {
		return fieldErr("reconnect", "is for raw event streams (protocol 'sse'), not %s: "+
			"an LLM answer cannot resume mid-way", c.Protocol.Name)
	}
	return nil
}
