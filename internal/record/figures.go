package record

// The tables of figures: each row names its JS key, its k6 metric (kind and
// unit), its one line of help and how the report keeps it (keep.go), and
// reads its value from a record, a Call here (a Job in job.go). The JS
// result and the k6 samples are built by walking a table (JS, Emit), the
// binding registers its metrics from it, and the report's distributions are
// the rows that keep one (Kept), so a new figure is a field of the record (or
// stream.Result), a row and its doc lines (index.d.ts, docs/client.md,
// docs/metrics.md); docs/figures_test.go holds them to the same list.

import (
	"time"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/measure"
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
	// Help is what the figure is, in one line.
	Help string
	// Keep is how the report keeps the figure (a call's only).
	Keep Keep
	// Failed is what the figure does with a failed call (failed.go): the
	// JS result, the k6 samples and the report follow it alike.
	Failed Failed

	js      func(*R) any
	samples func(*R, Emit)
	kept    func(*R) (float64, bool)
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

// Kept is the value the report keeps of r in the row's distribution (ms for
// a duration); false when r has none. The gaps' are many (Keep.PerEvent):
// the report reads them itself.
func (f *Figure[R]) Kept(r *R) (float64, bool) {
	if f.kept == nil {
		return 0, false
	}
	return f.kept(r)
}

// keeping is f kept by the report as k says: the value its JS key and its
// k6 samples have too (measured).
func keeping[R any](f Figure[R], k Keep) Figure[R] {
	f.Keep = k
	return f
}

// measured is a figure with at most one value per call: the same value is
// the JS key's (null when unknown), the k6 sample's (at the moment at) and
// what the report keeps, so the three count the same calls.
func measured(f Figure[Call], value func(*Call) (float64, bool), at func(*Call) time.Time) Figure[Call] {
	f.js = func(c *Call) any {
		if v, ok := value(c); ok {
			return v
		}
		return nil
	}
	f.samples = func(c *Call, e Emit) {
		if v, ok := value(c); ok {
			e(at(c), v)
		}
	}
	f.kept = value
	return f
}

// duration is a measured duration in ms.
func duration(get func(*Call) measure.Duration) func(*Call) (float64, bool) {
	return func(c *Call) (float64, bool) { return get(c).MS() }
}

// atEndOf is the call's end, a sample's moment.
func atEndOf(c *Call) time.Time { return c.End }

// atLastOutput is the call's last output event, a sample's moment.
func atLastOutput(c *Call) time.Time { return c.LastOutAt }

// jsObject is r's JS object: the value of every row with a key.
func jsObject[R any](table []Figure[R], r *R) map[string]any {
	// Sized for the keyed rows only: a hint of every row (a third have no
	// key) would allocate the map's next size up on every call.
	keys := 0
	for i := range table {
		if table[i].Key != "" {
			keys++
		}
	}
	m := make(map[string]any, keys)
	for i := range table {
		if f := &table[i]; f.Key != "" {
			m[f.Key] = f.JS(r)
		}
	}
	return m
}

// Figures is every figure of a call. Its order is the samples' order in a
// call's batch.
var Figures = []Figure[Call]{ //nolint:gochecknoglobals // the read-only table of figures every reader derives from
	{Key: "attempts", Metric: "llm_attempts", Kind: Counter, PerAttempt: true, js: attemptList,
		Help: "every HTTP attempt of the call, tagged by its route and number"},
	{Metric: "llm_requests", Kind: Counter, Help: "every call once, whatever its retries and fallback",
		Keep: Keep{Tally: "requests"}, samples: func(c *Call, e Emit) { e(c.End, 1) }},
	{Metric: "llm_failed", Kind: Rate, Help: "1 for a call no route answered, 0 otherwise",
		Keep: Keep{Tally: "failures"}, samples: func(c *Call, e Emit) { e(c.End, boolValue(!c.OK)) }},
	{Metric: "llm_errors", Kind: Counter, Help: "failed calls, tagged error_type",
		Keep: Keep{Tally: "errors"}, samples: func(c *Call, e Emit) {
			if !c.OK {
				e(c.End, 1)
			}
		}},
	count("retries", "llm_retries", "attempts after the first, on whichever route", func(c *Call) int { return c.Retries() }),
	count("reconnects", "llm_reconnects", "reconnections of raw sse streams", func(c *Call) int { return c.Reconnects() }),
	keeping(measured(Figure[Call]{Key: "clientLag", Metric: "llm_client_lag", Kind: Trend, Unit: Duration,
		Help: "how late this load generator ran while the call did"},
		func(c *Call) (float64, bool) { return c.ClientLag.MS() }, atEndOf), Keep{Dist: DistClientLag}),
	answersOnly(verdict("ttftLate", "llm_ttft_late", "this process made the call's TTFT late by half a decode step or more",
		(*Call).TTFTLate)),
	{Key: "cost", Metric: "llm_cost", Kind: Counter, Help: "what the call cost, with prices",
		Keep: Keep{Tally: "cost"}, js: costObject, samples: func(c *Call, e Emit) {
			if c.Priced {
				e(c.End, c.Cost.Total())
			}
		}},
	{Metric: "llm_conn_reused", Kind: Rate, Help: "1 for a call whose final attempt reused a connection, 0 when it opened one",
		Keep: Keep{Tally: "reused_conns"}, samples: func(c *Call, e Emit) {
			if c.Status != 0 { // a response came, so a connection was had: new or reused
				e(c.End, boolValue(c.Connect == 0))
			}
		}},
	{Metric: "llm_conn_opened", Kind: Counter, Help: "calls whose final attempt opened a new connection",
		Keep: Keep{Tally: "new_conns"}, samples: func(c *Call, e Emit) {
			if c.Status != 0 && c.Connect > 0 {
				e(c.End, 1)
			}
		}},
	reportOnly(Keep{Dist: DistConnect}, "connection set-up (dial and TLS) of the calls that opened one",
		func(c *Call) (float64, bool) { return positiveMS(c.Connect) }),
	keeping(sinceStart("ttfb", "llm_ttfb", "t0 → response headers", func(c *Call) measure.Duration { return c.TTFB }),
		Keep{Dist: DistTTFB}),
	keeping(sinceStart("ttft", "llm_ttft", "TTFT: time to first token", func(c *Call) measure.Duration { return c.TTFT }),
		Keep{Dist: DistTTFT, Raw: true, Latency: true}),
	reportOnly(Keep{Dist: DistTTFTCacheHit}, "TTFT of the calls that hit the prompt cache",
		func(c *Call) (float64, bool) { return ttftIf(c, stream.CacheHit) }),
	reportOnly(Keep{Dist: DistTTFTCacheMiss}, "TTFT of the calls that missed the prompt cache",
		func(c *Call) (float64, bool) { return ttftIf(c, stream.CacheMiss) }),
	reportOnly(Keep{Dist: DistNetworkShare}, "the share of TTFT spent before the server could answer", networkShare),
	keeping(sinceStart("ttftAnswer", "llm_ttft_answer", "TTFT-answer: after any reasoning",
		func(c *Call) measure.Duration { return c.TTFTAnswer }), Keep{Dist: DistTTFTAnswer, Latency: true}),
	measured(Figure[Call]{Key: "reasoningTime", Metric: "llm_reasoning_time", Kind: Trend, Unit: Duration,
		Help: "first output → first answer output: how long the model reasoned"},
		duration((*Call).ReasoningTime), func(c *Call) time.Time { return c.Start.Add(c.TTFTAnswer.Or(0)) }),
	answersOnly(keeping(sinceStart("e2e", "llm_e2e", "E2E: the whole call", func(c *Call) measure.Duration { return c.E2E }),
		Keep{Dist: DistE2E, Raw: true, Latency: true})),
	answersOnly(keeping(atEnd("tailTime", "llm_stream_tail",
		"last output event → end of stream (the terminal event or the body's end)", (*Call).TailTime),
		Keep{Dist: "stream_tail"})),
	{Key: "gaps", Metric: "llm_inter_token_gap", Kind: Trend, Unit: Duration, Help: "Gap between output events",
		Keep: Keep{Dist: DistGap, PerEvent: true, Latency: true, Tally: "gap_count"},
		js:   resultGaps, samples: gapSamples},
	answersOnly(keeping(measured(Figure[Call]{Key: "tpot", Metric: "llm_tpot", Kind: Trend, Unit: Duration,
		Help: "TPOT: time per output token"}, duration(func(c *Call) measure.Duration { return c.TPOT }), atLastOutput),
		Keep{Dist: DistTPOT, Raw: true, Latency: true})),
	answersOnly(keeping(measured(Figure[Call]{Key: "tokensPerSec", Metric: "llm_tokens_per_sec", Kind: Trend,
		Help: "decode speed of one call: output tokens after the first event over their time"}, tokensPerSec, atLastOutput),
		Keep{Dist: DistTokensPerSec})),
	keeping(fromDue("dispatchDelay", "llm_dispatch_delay", "Dispatch delay: sent after the due time",
		func(*Call) measure.Duration { return measure.Of(0) }), Keep{Dist: DistDispatchDelay, Latency: true}),
	keeping(fromDue("ttftFromDue", "llm_ttft_from_due", "TTFT from the due time", func(c *Call) measure.Duration { return c.TTFT }),
		Keep{Dist: DistTTFTFromDue, Latency: true}),
	answersOnly(keeping(fromDue("e2eFromDue", "llm_e2e_from_due", "E2E from the due time", func(c *Call) measure.Duration { return c.E2E }),
		Keep{Dist: DistE2EFromDue, Latency: true})),
	keeping(atEnd("clientParseTime", "llm_client_parse_time",
		"time this client spent between reads of the body: framing, decoding, dispatching",
		func(c *Call) measure.Duration { return measure.Of(c.ClientParse) }), Keep{Dist: DistClientParse}),
	reportOnly(Keep{Dist: DistEventLag}, "the longest wait of an event for its JS callback",
		func(c *Call) (float64, bool) { return positiveMS(c.EventLag) }),
	{Key: "requestBytes", Metric: "llm_request_bytes", Kind: Trend, Help: "the request body's size, in bytes",
		js: func(c *Call) any { return c.RequestBytes },
		samples: func(c *Call, e Emit) {
			if c.RequestBytes > 0 {
				e(c.Start, float64(c.RequestBytes))
			}
		}},
	{Metric: "llm_gaps_unsampled", Kind: Counter, Help: "gaps the gapSampleRate cap kept out of llm_inter_token_gap",
		Keep: Keep{Tally: "gaps_unsampled"}, samples: func(c *Call, e Emit) {
			if c.GapSamples == config.GapsSampled && c.GapsUnsampled > 0 {
				e(c.End, float64(c.GapsUnsampled))
			}
		}},
	tally(count("stalls", "llm_stalls", "gaps above stallThreshold", func(c *Call) int { return c.Stalls }), "stalls"),
	answersOnly(Figure[Call]{Metric: "llm_finish_omitted", Kind: Counter, Help: "complete answers whose server named no finish reason",
		Keep: Keep{Tally: "finish_omitted"}, samples: func(c *Call, e Emit) {
			if c.FinishOmitted {
				e(c.End, 1)
			}
		}}),
	tally(usageCount("llm_prompt_tokens", "prompt tokens, from the server's usage", func(c *Call) int64 { return c.PromptTokens() }),
		"prompt_tokens"),
	tally(usageCount("llm_cached_tokens", "cached prompt tokens, from the server's usage",
		func(c *Call) int64 { return c.CachedTokens() }), "cached_tokens"),
	usageCount("llm_reasoning_tokens", "reasoning tokens, from the server's usage", func(c *Call) int64 {
		if c.Usage == nil {
			return 0
		}
		return c.Usage.ReasoningTokens
	}),
	tally(count("outputTokens", "llm_output_tokens", "output tokens, counted as tokenSource says",
		func(c *Call) int64 { return c.OutputTokens }), "output_tokens"),
	{Key: "cache", Metric: "llm_cache_hit", Kind: Rate, Help: "cached prompt tokens > 0, when the server reported usage",
		Keep: Keep{Tally: "cache_hits"}, js: func(c *Call) any { return c.Cache.String() },
		samples: func(c *Call, e Emit) {
			if c.Cache != stream.CacheUnknown {
				e(c.End, boolValue(c.Cache == stream.CacheHit))
			}
		}},
	serverTiming("llm_server_queue_time", "queue", "the queue time the server reported (Server-Timing)"),
	serverTiming("llm_server_prefill_time", "prefill", "the prefill time the server reported (Server-Timing)"),
	verdict("", "llm_goodput", "the call met every objective of the client's slo", func(c *Call) Verdict { return c.Goodput }),
	answersOnly(verdict("", "llm_regression", "the call's TTFT was above the loaded baseline's P95",
		func(c *Call) Verdict { return c.Regression })),

	// The result's other keys: no k6 metric.
	jsOnly("ok", "whether a route answered", func(c *Call) any { return c.OK }),
	jsOnly("status", "the HTTP status of the final attempt (0 without a response)", func(c *Call) any { return c.Status }),
	jsOnly("error", "the error's type and message, null for an answered call", func(c *Call) any { return errorObject(c.Err) }),
	jsOnly("text", "the answer's text", func(c *Call) any { return c.Text }),
	jsOnly("reasoningText", "the streamed reasoning", func(c *Call) any { return c.Reasoning }),
	jsOnly("toolCalls", "the tool calls, assembled", toolCalls),
	jsOnly("finishReason", "why the answer ended, as the server said", func(c *Call) any { return c.FinishReason }),
	jsOnly("finishSource", "how the finish reason is known", func(c *Call) any { return finishSource(c.FinishSource) }),
	jsOnly("usage", "the server's usage report", usageObject),
	jsOnly("tokenSource", "where the output-token count came from", func(c *Call) any { return c.TokenSource }),
	jsOnly("model", "the model the server named", func(c *Call) any { return c.Result.Model }),
	jsOnly("clientParseShare", "clientParseTime / e2e", parseShare),
	jsOnly("chunks", "the stream's output events", func(c *Call) any { return c.Chunks }),
	jsOnly("servedBy", "the client that ended the call", func(c *Call) any { return c.Name }),
	jsOnly("route", "the route that ended the call", func(c *Call) any { return c.Route }),
	jsOnly("requestId", "the server's request id", func(c *Call) any { return c.RequestID }),
	jsOnly("traceId", "the W3C trace id the call's requests carried, with the tracing option", func(c *Call) any {
		if c.TraceID == "" {
			return nil
		}
		return c.TraceID
	}),
	jsOnly("serverTimings", "the timings the server reported", func(c *Call) any {
		if len(c.ServerTimings) == 0 {
			return nil
		}
		return c.ServerTimings
	}),
	jsOnly("proto", "the response's HTTP protocol", func(c *Call) any { return c.Proto }),
	jsOnly("sendWait", "t0 → the request began to go out, the connection's set-up left out", func(c *Call) any { return c.SendWait.JS() }),
	jsOnly("dueAt", "when a schedule wanted the call sent", func(c *Call) any {
		if c.Due.IsZero() {
			return nil
		}
		return float64(c.Due.UnixMicro()) / 1000
	}),
	jsOnly("choices", "each answer of a call that asked for several", choiceList),
	jsOnly("turn", "the call's turn in a live conversation", func(c *Call) any {
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

func jsOnly(key, help string, js func(*Call) any) Figure[Call] {
	return Figure[Call]{Key: key, Help: help, js: js}
}

// reportOnly is a distribution the report keeps that is neither a JS key nor
// a k6 metric.
func reportOnly(k Keep, help string, get func(*Call) (float64, bool)) Figure[Call] {
	unit := Duration
	if k.Dist == DistNetworkShare {
		unit = Plain
	}
	return Figure[Call]{Unit: unit, Help: help, Keep: k, kept: get}
}

// tally is f with the record's counter of it named.
func tally(f Figure[Call], name string) Figure[Call] {
	f.Keep.Tally = name
	return f
}

// sinceStart is a duration from t0, sampled at the moment it ends.
func sinceStart(key, metric, help string, get func(*Call) measure.Duration) Figure[Call] {
	return measured(Figure[Call]{Key: key, Metric: metric, Kind: Trend, Unit: Duration, Help: help},
		duration(get), func(c *Call) time.Time { return c.Start.Add(get(c).Or(0)) })
}

// fromDue is a moment of the call (since(c) after the send, when measured)
// counted from the call's due time instead (Call.FromDue), sampled at that
// moment. None for calls without a due time.
func fromDue(key, metric, help string, since func(*Call) measure.Duration) Figure[Call] {
	get := func(c *Call) measure.Duration { return c.FromDue(since(c)) }
	return measured(Figure[Call]{Key: key, Metric: metric, Kind: Trend, Unit: Duration, Help: help},
		duration(get), func(c *Call) time.Time { return c.Due.Add(get(c).Or(0)) })
}

// atEnd is a duration sampled at the call's end when measured.
func atEnd(key, metric, help string, get func(*Call) measure.Duration) Figure[Call] {
	return measured(Figure[Call]{Key: key, Metric: metric, Kind: Trend, Unit: Duration, Help: help},
		duration(get), atEndOf)
}

// count is a Counter sampled at the call's end when above zero.
func count[N int | int64](key, metric, help string, get func(*Call) N) Figure[Call] {
	return Figure[Call]{Key: key, Metric: metric, Kind: Counter, Help: help,
		js: func(c *Call) any { return get(c) },
		samples: func(c *Call, e Emit) {
			if n := get(c); n > 0 {
				e(c.End, float64(n))
			}
		}}
}

// usageCount is a token count from the server's usage, in result.usage.
func usageCount(metric, help string, get func(*Call) int64) Figure[Call] {
	f := count("", metric, help, get)
	f.js = nil
	return f
}

// verdict is a Rate: 1 or 0, no sample (and null) when not judged.
func verdict(key, metric, help string, get func(*Call) Verdict) Figure[Call] {
	return Figure[Call]{Key: key, Metric: metric, Kind: Rate, Help: help,
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
func serverTiming(metric, name, help string) Figure[Call] {
	return Figure[Call]{Metric: metric, Kind: Trend, Unit: Duration, Help: help, samples: func(c *Call, e Emit) {
		if v, ok := c.ServerTimings[name]; ok {
			e(c.End, v)
		}
	}}
}

// positiveMS is a duration in ms when above zero: a lag or a set-up that was
// none (or not measured) is not kept.
func positiveMS(d time.Duration) (float64, bool) {
	if d <= 0 {
		return 0, false
	}
	return measure.MS(d), true
}

// ttftIf is the call's TTFT when its prompt-cache state is s.
func ttftIf(c *Call, s stream.CacheState) (float64, bool) {
	if c.Cache != s {
		return 0, false
	}
	return c.TTFT.MS()
}

// networkShare is the part of TTFT spent before the server could answer: the
// time to response headers when they came before the first token (a server
// that sends headers with the first token tells us nothing), else the
// connection set-up. None without a TTFT above zero.
func networkShare(c *Call) (float64, bool) {
	ttft, ok := c.TTFT.MS()
	if !ok || ttft <= 0 {
		return 0, false
	}
	net := max(measure.MS(c.Connect), 0)
	if b, ok := c.TTFB.MS(); ok && b < 0.9*ttft && b > net {
		net = b
	}
	return min(1, net/ttft), true
}

// gapSamples are the llm_inter_token_gap samples gapSamples asks for, each
// at the moment its gap ended: every gap ('event'), the kept ones
// ('sampled'), the mean ('request') or none ('off').
func gapSamples(c *Call, e Emit) {
	switch {
	case c.GapSamples == config.GapsPerEvent, c.GapSamples == config.GapsSampled && c.KeepGap.Set():
		at := c.FirstOutAt
		for i := range c.Gaps {
			g := c.Gaps.At(i)
			at = at.Add(g)
			if !c.KeepGap.Set() || c.KeepGap.Has(i) {
				e(at, measure.MS(g))
			}
		}
	case c.GapSamples == config.GapsPerRequest:
		if mean, ok := c.GapMean.MS(); ok {
			e(c.LastOutAt, mean)
		}
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
