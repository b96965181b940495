// Package config validates the options a script passes to new Client(...) and to
// client.chat(body, params). It works on the plain Go values that a JS object
// exports to (map[string]any, string, int64, float64, bool), so it is tested
// without a JS runtime, and every mistake gets a message that names the option.
package config

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/protocol"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// Gap sampling modes: how many llm_inter_token_gap samples a request emits.
const (
	GapsPerEvent   = "event"   // one per gap: exact distributions, memory grows with tokens
	GapsPerRequest = "request" // one per request: the request's mean gap
	GapsOff        = "off"
)

// Defaults, documented in README.
const (
	DefaultConnectTimeout    = 10 * time.Second
	DefaultFirstTokenTimeout = 60 * time.Second
	DefaultIdleTimeout       = 60 * time.Second
	DefaultTotalTimeout      = 10 * time.Minute
	DefaultStallThreshold    = 500 * time.Millisecond
)

// SLO is the per-request objective behind llm_goodput; zero fields are not checked.
type SLO struct {
	TTFT, TPOT, E2E time.Duration
}

// Set reports whether any objective is given.
func (s SLO) Set() bool { return s.TTFT > 0 || s.TPOT > 0 || s.E2E > 0 }

// Backoff is the wait between retry attempts: min(max, base·2^(n-1)) ± jitter.
type Backoff struct {
	Base, Max time.Duration
	Jitter    float64 // fraction of the wait, 0..1
}

// Retry is the opt-in retry policy.
type Retry struct {
	Attempts          int // total attempts, 1 = no retry
	On                map[stream.ErrorType]bool
	Backoff           Backoff
	RespectRetryAfter bool
	IdempotencyKey    string // header name; "" = none
	AfterOutput       bool   // also retry when part of an answer was received
}

// Client is a validated new Client(...) options object.
type Client struct {
	BaseURL         string
	Protocol        *protocol.Spec
	Model           string
	APIKey          string //nolint:gosec // carried, never printed
	Name            string
	Path            string
	Headers         map[string]string
	Tags            map[string]string
	Timeouts        stream.Timeouts
	GapSamples      string
	StallThreshold  time.Duration
	SLO             SLO
	ContinuousUsage bool
	Tokenizer       string // "" = count tokens from events when usage is missing
	MaxEventSize    int
	MaxBodySize     int64
	Retry           Retry
	FallbackOn      map[stream.ErrorType]bool
	KeepGaps        bool // result.gaps
	Reconnect       Reconnect
}

// Reconnect reopens a broken raw event stream with Last-Event-ID (protocol sse).
type Reconnect struct {
	Attempts int
	Delay    time.Duration // used when the server sent no retry: field
}

var clientKeys = []string{ //nolint:gochecknoglobals // read-only table
	"baseURL", "protocol", "model", "apiKey", "name", "path", "headers", "tags", "timeouts",
	"gapSamples", "stallThreshold", "slo", "continuousUsage", "tokenizer", "maxEventSize",
	"maxBodySize", "retry", "fallback", "fallbackOn", "gaps", "reconnect",
}

// ParseClient validates new Client(options). The "fallback" key is left to the caller.
func ParseClient(o map[string]any) (*Client, error) {
	if err := unknownKeys("Client options", o, clientKeys); err != nil {
		return nil, err
	}
	c := &Client{
		Timeouts: stream.Timeouts{
			Connect: DefaultConnectTimeout, FirstToken: DefaultFirstTokenTimeout,
			Idle: DefaultIdleTimeout, Total: DefaultTotalTimeout,
		},
		GapSamples:     GapsPerEvent,
		StallThreshold: DefaultStallThreshold,
		Retry:          Retry{Attempts: 1},
	}
	var err error
	p := parser{obj: o, where: "Client options"}
	c.BaseURL = strings.TrimRight(p.str("baseURL"), "/")
	if c.BaseURL == "" {
		return nil, errors.New("Client options: baseURL is required (e.g. 'http://127.0.0.1:8000/v1')")
	}
	if !strings.HasPrefix(c.BaseURL, "http://") && !strings.HasPrefix(c.BaseURL, "https://") {
		return nil, fmt.Errorf("Client options: baseURL must start with http:// or https://, got %q", c.BaseURL)
	}
	proto := p.str("protocol")
	if proto == "" {
		proto = "openai-chat"
	}
	if c.Protocol, err = protocol.Lookup(proto); err != nil {
		return nil, fmt.Errorf("Client options: protocol: %w", err)
	}
	c.Model = p.str("model")
	c.APIKey = p.str("apiKey")
	c.Name = p.str("name")
	c.Path = p.str("path")
	c.Headers = p.strMap("headers")
	c.Tags = p.strMap("tags")
	if t, ok := o["timeouts"]; ok {
		if c.Timeouts, err = parseTimeouts(t, c.Timeouts); err != nil {
			return nil, fmt.Errorf("Client options: %w", err)
		}
	}
	if g := p.str("gapSamples"); g != "" {
		c.GapSamples = g
	}
	switch c.GapSamples {
	case GapsPerEvent, GapsPerRequest, GapsOff:
	default:
		return nil, fmt.Errorf("Client options: gapSamples must be 'event', 'request' or 'off', got %q", c.GapSamples)
	}
	if d, ok := p.duration("stallThreshold"); ok {
		c.StallThreshold = d
	}
	if s, ok := o["slo"]; ok {
		sp := parser{obj: asMap(s), where: "Client options: slo"}
		if sp.obj == nil {
			return nil, errors.New("Client options: slo must be an object like {ttft: '800ms', tpot: '50ms', e2e: '30s'}")
		}
		if err := unknownKeys("Client options: slo", sp.obj, []string{"ttft", "tpot", "e2e"}); err != nil {
			return nil, err
		}
		c.SLO.TTFT, _ = sp.duration("ttft")
		c.SLO.TPOT, _ = sp.duration("tpot")
		c.SLO.E2E, _ = sp.duration("e2e")
		if sp.err != nil {
			return nil, sp.err
		}
	}
	c.ContinuousUsage = p.boolean("continuousUsage")
	c.KeepGaps = p.boolean("gaps")
	c.Tokenizer = p.str("tokenizer")
	c.MaxEventSize = int(p.positiveInt("maxEventSize"))
	c.MaxBodySize = p.positiveInt("maxBodySize")
	if r, ok := o["retry"]; ok {
		if c.Retry, err = parseRetry(r); err != nil {
			return nil, fmt.Errorf("Client options: %w", err)
		}
	}
	if r, ok := o["reconnect"]; ok {
		if c.Reconnect, err = parseReconnect(r, c.Protocol); err != nil {
			return nil, fmt.Errorf("Client options: %w", err)
		}
	}
	if f, ok := o["fallbackOn"]; ok {
		if c.FallbackOn, err = errorTypeSet("fallbackOn", f); err != nil {
			return nil, fmt.Errorf("Client options: %w", err)
		}
	}
	if p.err != nil {
		return nil, p.err
	}
	return c, nil
}

// Call is a validated params object of client.chat(body, params).
type Call struct {
	Tags     map[string]string
	Headers  map[string]string
	Timeouts stream.Timeouts
	Path     string
	Gaps     bool
}

var callKeys = []string{"tags", "headers", "timeouts", "path", "onEvent", "gaps", "item"} //nolint:gochecknoglobals

// ParseCall validates params against the client's defaults. "onEvent" is left to the caller.
func ParseCall(o map[string]any, c *Client) (*Call, error) {
	call := &Call{Timeouts: c.Timeouts, Path: c.Path, Gaps: c.KeepGaps}
	if o == nil {
		return call, nil
	}
	if err := unknownKeys("chat params", o, callKeys); err != nil {
		return nil, err
	}
	p := parser{obj: o, where: "chat params"}
	call.Tags = p.strMap("tags")
	call.Headers = p.strMap("headers")
	if path := p.str("path"); path != "" {
		call.Path = path
	}
	if _, ok := o["gaps"]; ok {
		call.Gaps = p.boolean("gaps")
	}
	if t, ok := o["timeouts"]; ok {
		var err error
		if call.Timeouts, err = parseTimeouts(t, c.Timeouts); err != nil {
			return nil, fmt.Errorf("chat params: %w", err)
		}
	}
	for k := range call.Tags {
		if reservedTags[k] {
			return nil, fmt.Errorf("chat params: tag %q is set by the client itself", k)
		}
	}
	return call, p.err
}

// reservedTags are set by the client; a call may not override them.
var reservedTags = map[string]bool{"error_type": true, "cache": true, "protocol": true} //nolint:gochecknoglobals

func parseTimeouts(v any, def stream.Timeouts) (stream.Timeouts, error) {
	m := asMap(v)
	if m == nil {
		return def, errors.New("timeouts must be an object like {connect: '3s', firstToken: '10s', idle: '30s', total: '10m'}")
	}
	if err := unknownKeys("timeouts", m, []string{"connect", "firstToken", "idle", "total"}); err != nil {
		return def, err
	}
	p := parser{obj: m, where: "timeouts"}
	t := def
	if d, ok := p.duration("connect"); ok {
		t.Connect = d
	}
	if d, ok := p.duration("firstToken"); ok {
		t.FirstToken = d
	}
	if d, ok := p.duration("idle"); ok {
		t.Idle = d
	}
	if d, ok := p.duration("total"); ok {
		t.Total = d
	}
	if p.err == nil && t.Total <= 0 {
		return def, errors.New("timeouts.total must be greater than 0 (it bounds every call)")
	}
	return t, p.err
}

func parseRetry(v any) (Retry, error) {
	m := asMap(v)
	r := Retry{Attempts: 1, RespectRetryAfter: true,
		Backoff: Backoff{Base: 200 * time.Millisecond, Max: 5 * time.Second, Jitter: 0.2},
		On: map[stream.ErrorType]bool{
			stream.ErrHTTP429: true, stream.ErrHTTP5xx: true, stream.ErrNetwork: true,
			stream.ErrTimeoutConnect: true, stream.ErrTimeoutFirstToken: true,
		}}
	if m == nil {
		return r, errors.New("retry must be an object like {attempts: 3, on: ['http_429', 'http_5xx']}")
	}
	keys := []string{"attempts", "on", "backoff", "respectRetryAfter", "idempotencyKey", "afterOutput"}
	if err := unknownKeys("retry", m, keys); err != nil {
		return r, err
	}
	p := parser{obj: m, where: "retry"}
	if n := p.positiveInt("attempts"); n > 0 {
		if n > 100 {
			return r, fmt.Errorf("retry.attempts must be at most 100, got %d", n)
		}
		r.Attempts = int(n)
	}
	if on, ok := m["on"]; ok {
		set, err := errorTypeSet("retry.on", on)
		if err != nil {
			return r, err
		}
		r.On = set
	}
	if b, ok := m["backoff"]; ok {
		bp := parser{obj: asMap(b), where: "retry.backoff"}
		if bp.obj == nil {
			return r, errors.New("retry.backoff must be an object like {base: '200ms', max: '5s', jitter: 0.2}")
		}
		if err := unknownKeys("retry.backoff", bp.obj, []string{"base", "max", "jitter"}); err != nil {
			return r, err
		}
		if d, ok := bp.duration("base"); ok {
			r.Backoff.Base = d
		}
		if d, ok := bp.duration("max"); ok {
			r.Backoff.Max = d
		}
		if j, ok := bp.obj["jitter"]; ok {
			f, isNum := toFloat(j)
			if !isNum || f < 0 || f > 1 {
				return r, fmt.Errorf("retry.backoff.jitter must be a number between 0 and 1, got %v", j)
			}
			r.Backoff.Jitter = f
		}
		if bp.err != nil {
			return r, bp.err
		}
	}
	if _, ok := m["respectRetryAfter"]; ok {
		r.RespectRetryAfter = p.boolean("respectRetryAfter")
	}
	r.AfterOutput = p.boolean("afterOutput")
	switch k := m["idempotencyKey"].(type) {
	case nil:
	case bool:
		if k {
			r.IdempotencyKey = "Idempotency-Key"
		}
	case string:
		r.IdempotencyKey = k
	default:
		return r, fmt.Errorf("retry.idempotencyKey must be true or a header name, got %T", k)
	}
	return r, p.err
}

func parseReconnect(v any, spec *protocol.Spec) (Reconnect, error) {
	r := Reconnect{Delay: time.Second}
	m := asMap(v)
	if m == nil {
		return r, errors.New("reconnect must be an object like {attempts: 3, delay: '1s'}")
	}
	if !spec.CompleteAtEOF {
		return r, fmt.Errorf("reconnect is for raw event streams (protocol 'sse'), not %s: an LLM answer cannot resume mid-way", spec.Name)
	}
	if err := unknownKeys("reconnect", m, []string{"attempts", "delay"}); err != nil {
		return r, err
	}
	p := parser{obj: m, where: "reconnect"}
	r.Attempts = int(p.positiveInt("attempts"))
	if d, ok := p.duration("delay"); ok {
		r.Delay = d
	}
	return r, p.err
}

func errorTypeSet(name string, v any) (map[stream.ErrorType]bool, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s must be a list of error types", name)
	}
	known := map[stream.ErrorType]bool{}
	for _, t := range stream.AllErrorTypes {
		known[t] = true
	}
	set := map[stream.ErrorType]bool{}
	for _, e := range list {
		s, _ := e.(string)
		if !known[stream.ErrorType(s)] {
			return nil, fmt.Errorf("%s: unknown error type %v (known: %v)", name, e, stream.AllErrorTypes)
		}
		set[stream.ErrorType(s)] = true
	}
	return set, nil
}

// parser reads typed fields and keeps the first error.
type parser struct {
	obj   map[string]any
	where string
	err   error
}

func (p *parser) fail(key, format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf("%s: %s "+format, append([]any{p.where, key}, args...)...)
	}
}

func (p *parser) str(key string) string {
	v, ok := p.obj[key]
	if !ok || v == nil {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		p.fail(key, "must be a string, got %T", v)
	}
	return s
}

func (p *parser) boolean(key string) bool {
	v, ok := p.obj[key]
	if !ok || v == nil {
		return false
	}
	b, ok := v.(bool)
	if !ok {
		p.fail(key, "must be true or false, got %T", v)
	}
	return b
}

func (p *parser) positiveInt(key string) int64 {
	v, ok := p.obj[key]
	if !ok || v == nil {
		return 0
	}
	f, isNum := toFloat(v)
	if !isNum || f <= 0 || f != math.Trunc(f) || f > math.MaxInt32*1024.0 {
		p.fail(key, "must be a positive whole number, got %v", v)
		return 0
	}
	return int64(f)
}

func (p *parser) strMap(key string) map[string]string {
	v, ok := p.obj[key]
	if !ok || v == nil {
		return nil
	}
	m := asMap(v)
	if m == nil {
		p.fail(key, "must be an object of strings, got %T", v)
		return nil
	}
	out := make(map[string]string, len(m))
	for k, x := range m {
		switch s := x.(type) {
		case string:
			out[k] = s
		case int64, float64, bool:
			out[k] = fmt.Sprint(s)
		default:
			p.fail(key, "value of %q must be a string, got %T", k, x)
		}
	}
	return out
}

// duration accepts a number of milliseconds or a duration string ("3s", "1m30s", "250ms").
func (p *parser) duration(key string) (time.Duration, bool) {
	v, ok := p.obj[key]
	if !ok || v == nil {
		return 0, false
	}
	d, err := ParseDuration(v)
	if err != nil {
		p.fail(key, "%v", err)
		return 0, false
	}
	return d, true
}

// ParseDuration reads milliseconds (a number) or a Go/k6 duration string.
func ParseDuration(v any) (time.Duration, error) {
	if f, ok := toFloat(v); ok {
		if f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, fmt.Errorf("must be a non-negative duration, got %v", v)
		}
		return time.Duration(f * float64(time.Millisecond)), nil
	}
	s, ok := v.(string)
	if !ok {
		return 0, fmt.Errorf("must be a duration like '3s' or a number of milliseconds, got %T", v)
	}
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d < 0 {
		return 0, fmt.Errorf("must be a duration like '3s', '250ms' or '1m30s', got %q", s)
	}
	return d, nil
}

func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func unknownKeys(where string, o map[string]any, known []string) error {
	var bad []string
	ok := map[string]bool{}
	for _, k := range known {
		ok[k] = true
	}
	for k := range o {
		if !ok[k] {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	return fmt.Errorf("%s: unknown option(s) %s (known: %s)", where, strings.Join(bad, ", "), strings.Join(known, ", "))
}
