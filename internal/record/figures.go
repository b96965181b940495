package record

// The tables of figures: each row names its JS key, its k6 metric (kind and
// unit), and reads its value from a record, a Call here (a Job in job.go).
// The JS result and the k6 samples are built by walking a table (JS, Emit),
// and the binding registers its metrics from it, so a new figure is a field
// of the record (or stream.Result), a row and its doc lines (index.d.ts,
// docs/client.md, docs/metrics.md); docs/figures_test.go holds the four to
// the same list.

import (
	"time"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// Kind is a k6 metric type.
type Kind uint8

// Metric kinds, as k6 has them.
const (
	Trend Kind = iota
	Counter
	Rate
)

// Unit is what a figure's values are.
type Unit uint8

// Units. Durations are ms in the JS result and time values in k6.
const (
	Plain Unit = iota
	Duration
)

// Emit receives one k6 sample of a figure: its value at the moment it
// describes.
type Emit func(at time.Time, v float64)

// Figure is one figure of a record R (a Call or a Job). Key is its JS key
// ("" when the JS object has none), Metric its llm_* metric ("" when k6 gets
// none).
type Figure[R any] struct {
	Key    string
	Metric string
	Kind   Kind // with Metric
	Unit   Unit
	// PerAttempt figures of a call are emitted by the binding once per
	// attempt, with that attempt's tags (llm_attempts); the table only
	// registers them.
	PerAttempt bool

	js      func(*R) any
	samples func(*R, Emit)
}

// JS is the figure's value in r's JS object.
func (f *Figure[R]) JS(r *R) any { return f.js(r) }

// Samples hands the figure's k6 samples of r to emit (none when not
// measured).
func (f *Figure[R]) Samples(r *R, emit Emit) {
	if f.samples != nil {
		f.samples(r, emit)
	}
}

// jsObject is r's JS object: the value of every row with a key.
func jsObject[R any](table []Figure[R], r *R) map[string]any {
	m := make(map[string]any, len(table))
	for i := range table {
		if f := &table[i]; f.Key != "" {
			m[f.Key] = f.js(r)
		}
	}
	return m
}

// Figures is every figure of a call. Its order is the samples' order in a
// call's batch.
var Figures = []Figure[Call]{ //nolint:gochecknoglobals // the read-only table of figures every reader derives from
	{Key: "attempts", Metric: "llm_attempts", Kind: Counter, PerAttempt: true, js: attemptList},
	{Metric: "llm_requests", Kind: Counter, samples: func(c *Call, e Emit) { e(c.End, 1) }},
	{Metric: "llm_failed", Kind: Rate, samples: func(c *Call, e Emit) { e(c.End, boolValue(!c.OK)) }},
	{Metric: "llm_errors", Kind: Counter, samples: func(c *Call, e Emit) {
		if !c.OK {
			e(c.End, 1)
		}
	}},
	count("retries", "llm_retries", func(c *Call) int { return c.Retries() }),
	count("reconnects", "llm_reconnects", func(c *Call) int { return c.Reconnects() }),
	atEnd("clientLag", "llm_client_lag", Trend, Duration, func(c *Call) time.Duration { return c.ClientLag }),
	verdict("ttftLate", "llm_ttft_late", (*Call).TTFTLate),
	{Key: "cost", Metric: "llm_cost", Kind: Counter, js: costObject, samples: func(c *Call, e Emit) {
		if c.Priced {
			e(c.End, c.Cost.Total())
		}
	}},
	{Metric: "llm_conn_reused", Kind: Rate, samples: func(c *Call, e Emit) {
		if c.Status != 0 { // a response came, so a connection was had: new or reused
			e(c.End, boolValue(c.Connect == 0))
		}
	}},
	{Metric: "llm_conn_opened", Kind: Counter, samples: func(c *Call, e Emit) {
		if c.Status != 0 && c.Connect > 0 {
			e(c.End, 1)
		}
	}},
	sinceStart("ttfb", "llm_ttfb", func(c *Call) time.Duration { return c.TTFB }),
	sinceStart("ttft", "llm_ttft", func(c *Call) time.Duration { return c.TTFT }),
	sinceStart("ttftAnswer", "llm_ttft_answer", func(c *Call) time.Duration { return c.TTFTAnswer }),
	{Key: "reasoningTime", Metric: "llm_reasoning_time", Kind: Trend, Unit: Duration,
		js: func(c *Call) any { return ms(c.ReasoningTime()) },
		samples: func(c *Call, e Emit) {
			if d := c.ReasoningTime(); d >= 0 {
				e(c.Start.Add(c.TTFTAnswer), msValue(d))
			}
		}},
	sinceStart("e2e", "llm_e2e", func(c *Call) time.Duration { return c.E2E }),
	fromDue("dispatchDelay", "llm_dispatch_delay", func(*Call) time.Duration { return 0 }),
	fromDue("ttftFromDue", "llm_ttft_from_due", func(c *Call) time.Duration { return c.TTFT }),
	fromDue("e2eFromDue", "llm_e2e_from_due", func(c *Call) time.Duration { return c.E2E }),
	{Key: "tpot", Metric: "llm_tpot", Kind: Trend, Unit: Duration, js: func(c *Call) any { return ms(c.TPOT) },
		samples: func(c *Call, e Emit) {
			if c.TPOT >= 0 {
				e(c.LastOutAt, msValue(c.TPOT))
			}
		}},
	{Key: "tokensPerSec", Metric: "llm_tokens_per_sec", Kind: Trend, js: tokensPerSec,
		samples: func(c *Call, e Emit) {
			if c.TPOT >= 0 {
				e(c.LastOutAt, c.TokensPerSec)
			}
		}},
	{Key: "clientParseTime", Metric: "llm_client_parse_time", Kind: Trend, Unit: Duration,
		js:      func(c *Call) any { return ms(c.ClientParse) },
		samples: func(c *Call, e Emit) { e(c.End, msValue(c.ClientParse)) }},
	{Key: "requestBytes", Metric: "llm_request_bytes", Kind: Trend, js: func(c *Call) any { return c.RequestBytes },
		samples: func(c *Call, e Emit) {
			if c.RequestBytes > 0 {
				e(c.Start, float64(c.RequestBytes))
			}
		}},
	{Key: "gaps", Metric: "llm_inter_token_gap", Kind: Trend, Unit: Duration, js: resultGaps, samples: gapSamples},
	{Metric: "llm_gaps_unsampled", Kind: Counter, samples: func(c *Call, e Emit) {
		if c.GapSamples == config.GapsSampled && c.GapsUnsampled > 0 {
			e(c.End, float64(c.GapsUnsampled))
		}
	}},
	count("stalls", "llm_stalls", func(c *Call) int { return c.Stalls }),
	{Metric: "llm_finish_omitted", Kind: Counter, samples: func(c *Call, e Emit) {
		if c.FinishOmitted {
			e(c.End, 1)
		}
	}},
	usageCount("llm_prompt_tokens", func(c *Call) int64 { return c.PromptTokens() }),
	usageCount("llm_cached_tokens", func(c *Call) int64 { return c.CachedTokens() }),
	usageCount("llm_reasoning_tokens", func(c *Call) int64 {
		if c.Usage == nil {
			return 0
		}
		return c.Usage.ReasoningTokens
	}),
	count("outputTokens", "llm_output_tokens", func(c *Call) int64 { return c.OutputTokens }),
	{Key: "cache", Metric: "llm_cache_hit", Kind: Rate, js: func(c *Call) any { return c.Cache.String() },
		samples: func(c *Call, e Emit) {
			if c.Cache != stream.CacheUnknown {
				e(c.End, boolValue(c.Cache == stream.CacheHit))
			}
		}},
	serverTiming("llm_server_queue_time", "queue"),
	serverTiming("llm_server_prefill_time", "prefill"),
	verdict("", "llm_goodput", func(c *Call) Verdict { return c.Goodput }),
	verdict("", "llm_regression", func(c *Call) Verdict { return c.Regression }),

	// The result's other keys: no k6 metric.
	jsOnly("ok", func(c *Call) any { return c.OK }),
	jsOnly("status", func(c *Call) any { return c.Status }),
	jsOnly("error", func(c *Call) any { return errorObject(c.Err) }),
	jsOnly("text", func(c *Call) any { return c.Text }),
	jsOnly("reasoningText", func(c *Call) any { return c.Reasoning }),
	jsOnly("toolCalls", toolCalls),
	jsOnly("finishReason", func(c *Call) any { return c.FinishReason }),
	jsOnly("finishSource", func(c *Call) any { return finishSource(c.FinishSource) }),
	jsOnly("usage", usageObject),
	jsOnly("tokenSource", func(c *Call) any { return c.TokenSource }),
	jsOnly("model", func(c *Call) any { return c.Result.Model }),
	jsOnly("clientParseShare", parseShare),
	jsOnly("chunks", func(c *Call) any { return c.Chunks }),
	jsOnly("servedBy", func(c *Call) any { return c.Name }),
	jsOnly("route", func(c *Call) any { return c.Route }),
	jsOnly("requestId", func(c *Call) any { return c.RequestID }),
	jsOnly("serverTimings", func(c *Call) any {
		if len(c.ServerTimings) == 0 {
			return nil
		}
		return c.ServerTimings
	}),
	jsOnly("proto", func(c *Call) any { return c.Proto }),
	jsOnly("sendWait", func(c *Call) any { return ms(c.SendWait) }),
	jsOnly("dueAt", func(c *Call) any {
		if c.Due.IsZero() {
			return nil
		}
		return float64(c.Due.UnixMicro()) / 1000
	}),
	jsOnly("choices", choiceList),
	jsOnly("turn", func(c *Call) any {
		if c.Turn == 0 {
			return nil
		}
		return c.Turn
	}),
}

// JS is the call's JS result: flat, camelCase, times in ms. Figures that
// could not be measured are null, never a made-up zero.
func (c *Call) JS() map[string]any { return jsObject(c.Table(), c) }

// The row builders of the table.

func jsOnly(key string, js func(*Call) any) Figure[Call] { return Figure[Call]{Key: key, js: js} }

// sinceStart is a duration from t0, sampled at the moment it ends.
func sinceStart(key, metric string, get func(*Call) time.Duration) Figure[Call] {
	return Figure[Call]{Key: key, Metric: metric, Kind: Trend, Unit: Duration,
		js: func(c *Call) any { return ms(get(c)) },
		samples: func(c *Call, e Emit) {
			if d := get(c); d >= 0 {
				e(c.Start.Add(d), msValue(d))
			}
		}}
}

// fromDue is a moment of the call (since(c) after the send, when measured)
// counted from the call's due time instead (Call.FromDue), sampled at that
// moment. None for calls without a due time.
func fromDue(key, metric string, since func(*Call) time.Duration) Figure[Call] {
	get := func(c *Call) time.Duration { return c.FromDue(since(c)) }
	return Figure[Call]{Key: key, Metric: metric, Kind: Trend, Unit: Duration,
		js: func(c *Call) any { return ms(get(c)) },
		samples: func(c *Call, e Emit) {
			if d := get(c); d >= 0 {
				e(c.Due.Add(d), msValue(d))
			}
		}}
}

// atEnd is a figure sampled at the call's end when measured.
func atEnd(key, metric string, kind Kind, unit Unit, get func(*Call) time.Duration) Figure[Call] {
	return Figure[Call]{Key: key, Metric: metric, Kind: kind, Unit: unit,
		js: func(c *Call) any { return ms(get(c)) },
		samples: func(c *Call, e Emit) {
			if d := get(c); d >= 0 {
				e(c.End, msValue(d))
			}
		}}
}

// count is a Counter sampled at the call's end when above zero.
func count[N int | int64](key, metric string, get func(*Call) N) Figure[Call] {
	return Figure[Call]{Key: key, Metric: metric, Kind: Counter,
		js: func(c *Call) any { return get(c) },
		samples: func(c *Call, e Emit) {
			if n := get(c); n > 0 {
				e(c.End, float64(n))
			}
		}}
}

// usageCount is a token count from the server's usage, in result.usage.
func usageCount(metric string, get func(*Call) int64) Figure[Call] {
	f := count("", metric, get)
	f.js = nil
	return f
}

// verdict is a Rate: 1 or 0, no sample (and null) when not judged.
func verdict(key, metric string, get func(*Call) Verdict) Figure[Call] {
	return Figure[Call]{Key: key, Metric: metric, Kind: Rate,
		js: func(c *Call) any {
			switch get(c) {
			case Yes:
				return true
			case No:
				return false
			default:
				return nil
			}
		},
		samples: func(c *Call, e Emit) {
			if v := get(c); v != Unjudged {
				e(c.End, boolValue(v == Yes))
			}
		}}
}

// serverTiming is a timing the server reported (ms), when it did.
func serverTiming(metric, name string) Figure[Call] {
	return Figure[Call]{Metric: metric, Kind: Trend, Unit: Duration, samples: func(c *Call, e Emit) {
		if v, ok := c.ServerTimings[name]; ok {
			e(c.End, v)
		}
	}}
}

// gapSamples are the llm_inter_token_gap samples gapSamples asks for, each
// at the moment its gap ended: every gap ('event'), the kept ones
// ('sampled'), the mean ('request') or none ('off').
func gapSamples(c *Call, e Emit) {
	switch {
	case c.GapSamples == config.GapsPerEvent, c.GapSamples == config.GapsSampled && c.KeepGap != nil:
		at := c.FirstOutAt
		for i := range c.Gaps {
			g := c.Gaps.At(i)
			at = at.Add(g)
			if c.KeepGap == nil || c.KeepGap(i) {
				e(at, msValue(g))
			}
		}
	case c.GapSamples == config.GapsPerRequest && c.GapMean >= 0:
		e(c.LastOutAt, msValue(c.GapMean))
	}
}

// ms is a duration in the JS result: ms, null when not measured.
func ms(d time.Duration) any {
	if d < 0 { // stream.Absent
		return nil
	}
	return msValue(d)
}

func msValue(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
