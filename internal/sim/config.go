package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// ModelProfile is how one simulated model behaves: its continuous-batching
// engine, its prefix cache, its output lengths and its faults. Every field's
// unit is in its name or its comment; Knobs lists them for --help.
type ModelProfile struct {
	// Engine.
	MaxNumSeqs         int     `json:"max_num_seqs" yaml:"max_num_seqs"`                 // running slots (sequences decoded together)
	MaxQueue           int     `json:"max_queue" yaml:"max_queue"`                       // requests that may wait for a slot; beyond it 429. -1 = unlimited
	PrefillBaseMs      float64 `json:"prefill_base_ms" yaml:"prefill_base_ms"`           // fixed cost of a step that prefills, ms
	PrefillPerTokenMs  float64 `json:"prefill_per_token_ms" yaml:"prefill_per_token_ms"` // cost per uncached prompt token, ms
	PrefillChunkTokens int     `json:"prefill_chunk_tokens" yaml:"prefill_chunk_tokens"` // prompt tokens prefilled per step (chunked prefill); 0 = whole prompts
	DecodeBaseMs       float64 `json:"decode_base_ms" yaml:"decode_base_ms"`             // fixed cost of a decode step, ms
	DecodePerSeqMs     float64 `json:"decode_per_seq_ms" yaml:"decode_per_seq_ms"`       // added per decoding sequence, ms
	TokensPerStep      int     `json:"tokens_per_step" yaml:"tokens_per_step"`           // tokens each sequence gets per decode step (sent in one chunk)
	MaxContextTokens   int     `json:"max_context_tokens" yaml:"max_context_tokens"`     // prompt + max_tokens a request may ask for; beyond it 400 context_length_exceeded. 0 = no limit

	// Output.
	DefaultMaxTokens int     `json:"default_max_tokens" yaml:"default_max_tokens"` // output tokens when a request sets no max_tokens
	OutputDist       string  `json:"output_dist" yaml:"output_dist"`               // "exact" (= max_tokens), "uniform" or "exponential" (sampled, capped by max_tokens)
	OutputMinTokens  int     `json:"output_min_tokens" yaml:"output_min_tokens"`   // lower bound of sampled lengths, tokens
	OutputMeanTokens float64 `json:"output_mean_tokens" yaml:"output_mean_tokens"` // mean of sampled lengths, tokens

	// Prefix cache.
	PrefixCache       bool `json:"prefix_cache" yaml:"prefix_cache"`                   // reuse cached prompt blocks (their tokens skip prefill)
	CacheBlockTokens  int  `json:"cache_block_tokens" yaml:"cache_block_tokens"`       // tokens per cache block
	CacheCapacityBlks int  `json:"cache_capacity_blocks" yaml:"cache_capacity_blocks"` // blocks kept (LRU)

	// Transport.
	GatewayFlushMs float64 `json:"gateway_flush_ms" yaml:"gateway_flush_ms"` // buffer the stream and flush every N ms like a buffering gateway; 0 = flush every chunk
	RetryAfterSec  int     `json:"retry_after_s" yaml:"retry_after_s"`       // Retry-After on a 429 for a full queue, s

	// Server quirks (quirks.go): real servers' departures from OpenAI's
	// documents, on the OpenAI routes.
	OmitFinishReason  bool   `json:"omit_finish_reason" yaml:"omit_finish_reason"`   // no chunk names a finish (llm-d's simulator)
	CachedTokensField string `json:"cached_tokens_field" yaml:"cached_tokens_field"` // prompt_tokens_details | prompt_tokens_detail | none

	// ToolCalls answers a streamed request that declares tools, and carries
	// no X-Sim-Tool-Calls, with tool calls: the header's syntax ("2,1";
	// tools.go). Empty: tool calls only when a request asks.
	ToolCalls string `json:"tool_calls,omitempty" yaml:"tool_calls,omitempty"`

	// ReasoningTokens streams that many reasoning tokens before the answer
	// of a streamed request that carries no X-Sim-Reasoning (reasoning.go).
	// 0: reasoning only when a request asks.
	ReasoningTokens int `json:"reasoning_tokens,omitempty" yaml:"reasoning_tokens,omitempty"`
	// ReasoningField is the OpenAI chat delta field reasoning streams in:
	// reasoning_content (the default: DeepSeek, SGLang, llama.cpp, vLLM
	// before 2026) or reasoning (vLLM since 2026).
	ReasoningField string `json:"reasoning_field,omitempty" yaml:"reasoning_field,omitempty"`

	// Power model (power.go): the GPUs serving the model draw PowerIdleW
	// each, plus PowerPerRequestW for every running request (shared among
	// them), served as NVIDIA's DCGM exporter does at /dcgm/metrics. Both
	// 0: no GPU exporter.
	PowerIdleW       float64 `json:"power_idle_w,omitempty" yaml:"power_idle_w,omitempty"`
	PowerPerRequestW float64 `json:"power_per_request_w,omitempty" yaml:"power_per_request_w,omitempty"`
	GPUs             int     `json:"gpus,omitempty" yaml:"gpus,omitempty"`
	// PowerGaugeOnly leaves the energy counter out, as exporters whose
	// counter list lacks it do: a consumer must integrate the power gauge.
	PowerGaugeOnly bool `json:"power_gauge_only,omitempty" yaml:"power_gauge_only,omitempty"`

	// SpecDecodeAcceptance turns speculative decoding's counters on: one
	// draft of len() tokens per decode step of a sequence, the token at
	// position i accepted in that share of drafts (non-increasing: a token
	// counts only after the one before it). Output timing is unchanged.
	SpecDecodeAcceptance []float64 `json:"spec_decode_acceptance,omitempty" yaml:"spec_decode_acceptance,omitempty"`

	// Faults maps a fault (X-Sim-Fault syntax, e.g. "stall=2000@5") to the
	// probability that a request gets it.
	Faults map[string]float64 `json:"faults,omitempty" yaml:"faults,omitempty"`
}

// ModelConfig is one served model. Base names the profile it starts from; the
// inline fields are that profile, so a config file only lists what it changes.
type ModelConfig struct {
	Name         string `json:"name" yaml:"name"`
	Base         string `json:"profile,omitempty" yaml:"profile,omitempty"`
	ModelProfile `yaml:",inline"`
}

// Config is the whole simulator. It reads from JSON or YAML with the same keys.
type Config struct {
	Addr         string        `json:"addr" yaml:"addr"`                       // listen address of the binary
	Seed         uint64        `json:"seed" yaml:"seed"`                       // seed of output text, sampled lengths and fault draws
	Models       []ModelConfig `json:"models" yaml:"models"`                   // the first is the default model
	Trace        string        `json:"trace,omitempty" yaml:"trace,omitempty"` // JSON-lines ground-truth file; empty = none
	MaxBodyBytes int64         `json:"max_body_bytes" yaml:"max_body_bytes"`   // request bodies above it get 413
	Tokenizer    string        `json:"tokenizer" yaml:"tokenizer"`             // encoding that counts prompt tokens

	TraceBodies bool `json:"trace_bodies" yaml:"trace_bodies"` // the trace also holds each request's body and headers (credentials redacted)

	// TraceWriter receives the trace lines too (in-process tests).
	TraceWriter io.Writer `json:"-" yaml:"-"`
}

// DefaultModelName is the model served when none is configured.
const DefaultModelName = "sim-large"

// DefaultConfig serves one model, DefaultModelName, with the demo profile.
func DefaultConfig() Config {
	p, _ := Profile("demo")
	return Config{
		Addr:         "127.0.0.1:8000",
		Seed:         1,
		Models:       []ModelConfig{{Name: DefaultModelName, Base: "demo", ModelProfile: p}},
		MaxBodyBytes: 8 << 20,
		Tokenizer:    "o200k_base",
	}
}

// ProfileNames lists the named profiles.
func ProfileNames() []string {
	out := make([]string, 0, len(profiles))
	for n := range profiles {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// profiles are the named starting points. Times are per step of the whole engine.
var profiles = map[string]func() ModelProfile{ //nolint:gochecknoglobals // read-only table
	// demo: a mid-size GPU model. Prefill ~3 ms per 100 uncached tokens; a
	// decode step of 20 ms + 0.5 ms per running sequence (about 50 tokens/s
	// alone, 36 tokens/s with the batch full); 16 slots.
	"demo": func() ModelProfile {
		return ModelProfile{
			MaxNumSeqs: 16, MaxQueue: 512,
			PrefillBaseMs: 2, PrefillPerTokenMs: 0.03,
			DecodeBaseMs: 20, DecodePerSeqMs: 0.5, TokensPerStep: 1,
			DefaultMaxTokens: 128, OutputDist: "exact",
			PrefixCache: true, CacheBlockTokens: 16, CacheCapacityBlks: 16384,
			RetryAfterSec: 1,
		}
	},
	// fast: zero delays, for benchmarks and quick tests.
	"fast": func() ModelProfile {
		return ModelProfile{
			MaxNumSeqs: 1024, MaxQueue: -1, TokensPerStep: 1,
			DefaultMaxTokens: 16, OutputDist: "exact",
			PrefixCache: true, CacheBlockTokens: 16, CacheCapacityBlks: 16384,
			RetryAfterSec: 1,
		}
	},
	// slow: one token per stream per second and room for 10 000 streams, so
	// thousands of streams stay open for minutes at little CPU (memory
	// measurements of the client).
	"slow": func() ModelProfile {
		return ModelProfile{
			MaxNumSeqs: 10000, MaxQueue: -1, DecodeBaseMs: 1000, TokensPerStep: 1,
			DefaultMaxTokens: 120, OutputDist: "exact",
			RetryAfterSec: 1,
		}
	},
	// small: 4 slots, so queueing and the knee show at low concurrency.
	"small": func() ModelProfile {
		return ModelProfile{
			MaxNumSeqs: 4, MaxQueue: 1000,
			PrefillBaseMs: 2, PrefillPerTokenMs: 0.05,
			DecodeBaseMs: 15, DecodePerSeqMs: 2, TokensPerStep: 1,
			DefaultMaxTokens: 64, OutputDist: "exact",
			PrefixCache: true, CacheBlockTokens: 16, CacheCapacityBlks: 4096,
			RetryAfterSec: 1,
		}
	},
	// large: a bigger model, slower prefill and decode (about 24 tokens/s alone).
	"large": func() ModelProfile {
		return ModelProfile{
			MaxNumSeqs: 32, MaxQueue: 1024,
			PrefillBaseMs: 5, PrefillPerTokenMs: 0.08,
			DecodeBaseMs: 40, DecodePerSeqMs: 1.5, TokensPerStep: 1,
			DefaultMaxTokens: 256, OutputDist: "exact",
			PrefixCache: true, CacheBlockTokens: 16, CacheCapacityBlks: 32768,
			RetryAfterSec: 1,
		}
	},
}

// Profile returns a named profile (see ProfileNames).
func Profile(name string) (ModelProfile, error) {
	f, ok := profiles[name]
	if !ok {
		return ModelProfile{}, fmt.Errorf("unknown profile %q (known: %s)", name, strings.Join(ProfileNames(), ", "))
	}
	return f(), nil
}

// NewModel is a model named name with the named profile.
func NewModel(name, profile string) (ModelConfig, error) {
	p, err := Profile(profile)
	if err != nil {
		return ModelConfig{}, err
	}
	return ModelConfig{Name: name, Base: profile, ModelProfile: p}, nil
}

// resolve fills a model given only by its Base.
func (m *ModelConfig) resolve() error {
	if m.Base == "" || !reflect.ValueOf(m.ModelProfile).IsZero() {
		return nil
	}
	p, err := Profile(m.Base)
	if err != nil {
		return fmt.Errorf("model %q: %w", m.Name, err)
	}
	m.ModelProfile = p
	return nil
}

// Validate reports the first impossible setting.
func (p *ModelProfile) Validate() error {
	var errs []error
	check := func(ok bool, format string, a ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, a...))
		}
	}
	check(p.MaxNumSeqs >= 1, "max_num_seqs must be at least 1 (got %d)", p.MaxNumSeqs)
	check(p.MaxQueue >= -1, "max_queue must be -1 (unlimited) or more (got %d)", p.MaxQueue)
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"prefill_base_ms", p.PrefillBaseMs}, {"prefill_per_token_ms", p.PrefillPerTokenMs},
		{"decode_base_ms", p.DecodeBaseMs}, {"decode_per_seq_ms", p.DecodePerSeqMs},
		{"gateway_flush_ms", p.GatewayFlushMs}, {"output_mean_tokens", p.OutputMeanTokens},
	} {
		check(f.v >= 0, "%s must not be negative (got %g)", f.name, f.v)
	}
	check(p.PrefillChunkTokens >= 0, "prefill_chunk_tokens must not be negative")
	check(p.TokensPerStep >= 1, "tokens_per_step must be at least 1 (got %d)", p.TokensPerStep)
	check(p.DefaultMaxTokens >= 1, "default_max_tokens must be at least 1 (got %d)", p.DefaultMaxTokens)
	check(p.OutputMinTokens >= 0, "output_min_tokens must not be negative")
	switch p.OutputDist {
	case "", "exact":
	case "uniform", "exponential":
		check(p.OutputMeanTokens >= 1, "output_dist %q needs output_mean_tokens >= 1", p.OutputDist)
	default:
		check(false, "output_dist must be exact, uniform or exponential (got %q)", p.OutputDist)
	}
	if p.PrefixCache {
		check(p.CacheBlockTokens >= 1, "cache_block_tokens must be at least 1")
		check(p.CacheCapacityBlks >= 1, "cache_capacity_blocks must be at least 1")
	}
	check(p.RetryAfterSec >= 0, "retry_after_s must not be negative")
	check(p.PowerIdleW >= 0 && p.PowerPerRequestW >= 0, "power_idle_w and power_per_request_w must not be negative")
	check(p.GPUs >= 0 && p.GPUs <= 64, "gpus must be in [0, 64] (got %d)", p.GPUs)
	check(len(p.SpecDecodeAcceptance) <= 16, "spec_decode_acceptance takes at most 16 positions")
	for i, a := range p.SpecDecodeAcceptance {
		check(a >= 0 && a <= 1 && (i == 0 || a <= p.SpecDecodeAcceptance[i-1]),
			"spec_decode_acceptance must be shares in [0, 1], non-increasing (position %d: %g)", i, a)
	}
	if err := checkCachedField(p.CachedTokensField); err != nil {
		check(false, "%v", err)
	}
	if p.ToolCalls != "" {
		if _, err := parseToolRounds(p.ToolCalls); err != nil {
			check(false, "tool_calls: %v", err)
		}
	}
	check(p.ReasoningTokens >= 0 && p.ReasoningTokens <= maxReasoningTokens, "reasoning_tokens must be in [0, %d] (got %d)", maxReasoningTokens, p.ReasoningTokens)
	switch p.ReasoningField {
	case "", "reasoning_content", "reasoning":
	default:
		check(false, "reasoning_field must be reasoning_content or reasoning (got %q)", p.ReasoningField)
	}
	for spec, prob := range p.Faults {
		if _, err := ParseFaults(spec); err != nil {
			check(false, "faults: %v", err)
		}
		check(prob >= 0 && prob <= 1, "faults: probability of %q must be in [0, 1] (got %g)", spec, prob)
	}
	return errors.Join(errs...)
}

// Validate checks the whole configuration.
func (c *Config) Validate() error {
	if len(c.Models) == 0 {
		return errors.New("no model configured")
	}
	seen := map[string]bool{}
	for i := range c.Models {
		m := &c.Models[i]
		if err := m.resolve(); err != nil {
			return err
		}
		if m.Name == "" {
			return fmt.Errorf("model %d has no name", i+1)
		}
		if seen[m.Name] {
			return fmt.Errorf("model %q is configured twice", m.Name)
		}
		seen[m.Name] = true
		if err := m.Validate(); err != nil {
			return fmt.Errorf("model %q: %w", m.Name, err)
		}
	}
	if c.MaxBodyBytes <= 0 {
		return fmt.Errorf("max_body_bytes must be positive (got %d)", c.MaxBodyBytes)
	}
	return nil
}

// LoadConfigFile reads a JSON (.json) or YAML (anything else) file on top of
// base. Each model starts from its "profile" (default "demo") and takes the
// fields the file gives.
func LoadConfigFile(path string, base Config) (Config, error) {
	data, err := os.ReadFile(path) // #nosec G304 -- the operator names the file
	if err != nil {
		return base, err
	}
	cfg, err := ParseConfig(data, strings.EqualFold(filepath.Ext(path), ".json"), base)
	if err != nil {
		return base, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// ParseConfig decodes a configuration document (JSON when isJSON, else YAML,
// which also accepts JSON) on top of base. Unknown keys are errors.
func ParseConfig(data []byte, isJSON bool, base Config) (Config, error) {
	type rawModels struct {
		JSON []json.RawMessage `json:"models"`
		YAML []yaml.Node       `yaml:"models"`
	}
	cfg := base
	cfg.Models = nil
	var raw rawModels
	if isJSON {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cfg); err != nil {
			return base, err
		}
		if err := json.Unmarshal(data, &raw); err != nil {
			return base, err
		}
	} else {
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
			return base, err
		}
		if err := yaml.Unmarshal(data, &raw); err != nil {
			return base, err
		}
	}
	if raw.JSON == nil && raw.YAML == nil {
		cfg.Models = base.Models
		return cfg, nil
	}
	n := max(len(raw.JSON), len(raw.YAML))
	cfg.Models = make([]ModelConfig, n)
	for i := range n {
		var head struct {
			Base string `json:"profile" yaml:"profile"`
		}
		decode := func(v any) error {
			if isJSON {
				return json.Unmarshal(raw.JSON[i], v)
			}
			return raw.YAML[i].Decode(v)
		}
		if err := decode(&head); err != nil {
			return base, fmt.Errorf("models[%d]: %w", i, err)
		}
		if head.Base == "" {
			head.Base = "demo"
		}
		m, err := NewModel("", head.Base)
		if err != nil {
			return base, fmt.Errorf("models[%d]: %w", i, err)
		}
		if err := decode(&m); err != nil {
			return base, fmt.Errorf("models[%d]: %w", i, err)
		}
		cfg.Models[i] = m
	}
	return cfg, nil
}

// SetKnob sets one profile field by its JSON/YAML key ("decode_base_ms=30").
func (p *ModelProfile) SetKnob(key, value string) error {
	if key == "faults" {
		return errors.New("faults are set with --fault SPEC:P")
	}
	if _, ok := knobIndex()[key]; !ok {
		return fmt.Errorf("unknown knob %q (see --help)", key)
	}
	doc := map[string]any{}
	var v any
	if err := yaml.Unmarshal([]byte(value), &v); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	doc[key] = v
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, p); err != nil {
		return fmt.Errorf("%s=%s: %w", key, value, err)
	}
	return nil
}

// Knob describes one ModelProfile field for --help.
type Knob struct {
	Key, Help string
}

// Knobs lists the profile fields with their units, in declaration order.
func Knobs() []Knob { return knobList }

var knobList = []Knob{ //nolint:gochecknoglobals // read-only table
	{"max_num_seqs", "running slots: sequences prefilled/decoded together (count)"},
	{"max_queue", "requests that may wait for a slot; one more gets 429 + Retry-After (count; -1 = unlimited)"},
	{"prefill_base_ms", "fixed cost of an engine step that prefills (ms)"},
	{"prefill_per_token_ms", "prefill cost per uncached prompt token (ms/token)"},
	{"prefill_chunk_tokens", "prompt tokens prefilled per step, chunked prefill (tokens; 0 = whole prompts in one step)"},
	{"decode_base_ms", "fixed cost of a decode step (ms)"},
	{"decode_per_seq_ms", "decode step cost added per decoding sequence (ms/sequence)"},
	{"tokens_per_step", "tokens each sequence gets per decode step, sent as one chunk (tokens)"},
	{"max_context_tokens", "prompt + max_tokens a request may ask for; beyond it 400 context_length_exceeded, 0 = no limit (tokens)"},
	{"default_max_tokens", "output length when the request sets no max_tokens (tokens)"},
	{"output_dist", "output length: exact (= max_tokens) | uniform | exponential (sampled, capped by max_tokens; finish_reason stop when shorter)"},
	{"output_min_tokens", "smallest sampled output length (tokens)"},
	{"output_mean_tokens", "mean sampled output length (tokens)"},
	{"prefix_cache", "prefix cache on/off (bool)"},
	{"cache_block_tokens", "tokens per prefix-cache block; only whole blocks are cached (tokens)"},
	{"cache_capacity_blocks", "prefix-cache capacity, least recently used blocks evicted (blocks)"},
	{"gateway_flush_ms", "buffer the stream and flush every N ms, like a buffering gateway (ms; 0 = flush every chunk)"},
	{"retry_after_s", "Retry-After sent with the 429 of a full queue (s)"},
	{"omit_finish_reason", "OpenAI routes: no chunk names a finish, as llm-d's inference simulator streams (bool)"},
	{"cached_tokens_field", "OpenAI routes: usage's cached-token object, prompt_tokens_details | prompt_tokens_detail (llm-d's simulator) | none"},
	{"tool_calls", "tool calls per round for a streamed request that declares tools and sends no X-Sim-Tool-Calls (calls, e.g. 2,1; empty = only when asked)"},
	{"reasoning_tokens", "reasoning streamed before the answer of a streamed request that sends no X-Sim-Reasoning (tokens; 0 = only when asked)"},
	{"reasoning_field", "OpenAI chat: the delta field reasoning streams in, reasoning_content (default) | reasoning (vLLM since 2026)"},
	{"power_idle_w", "power model: each GPU's draw with no request running (W; with power_per_request_w 0 and this 0, no /dcgm/metrics)"},
	{"power_per_request_w", "power model: draw added per running request, shared among the GPUs (W)"},
	{"gpus", "power model: GPUs serving the model, one DCGM series each (count; 0 = 1)"},
	{"power_gauge_only", "power model: /dcgm/metrics without the energy counter, power gauge only (bool)"},
	{"spec_decode_acceptance", "speculative decoding's counters: per draft position, the share of drafts whose token is accepted (list of 0-1, non-increasing, e.g. [0.8,0.6,0.4]; empty = off)"},
}

func knobIndex() map[string]int {
	m := make(map[string]int, len(knobList))
	for i, k := range knobList {
		m[k.Key] = i
	}
	return m
}
