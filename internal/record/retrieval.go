package record

// The table of a non-streamed call's figures (client.embed, client.rerank).
// It is its own table because such a call answers different questions
// (how big the batch, how fast its input tokens went, how long the whole
// answer took) and has no first token, gaps or output: a chat-only figure
// would be null or a made-up 0 in every row. The figures both kinds of call
// have (llm_requests, llm_failed, retries, connections, the SLO verdict…)
// are the same rows as chat's, found in Figures by name, so they stay one
// definition.

import (
	"github.com/llmstream/xk6-llmstream/internal/embed"
	"github.com/llmstream/xk6-llmstream/internal/measure"
)

// RetrievalFigures is every figure of an embed or rerank call, in the order
// of the call's samples.
var RetrievalFigures = []Figure[Call]{ //nolint:gochecknoglobals // the read-only table of figures every reader derives from
	{Key: "attempts", Metric: "llm_attempts", Kind: Counter, PerAttempt: true, js: retrievalAttempts,
		Help: "every HTTP attempt of the call, tagged by its route and number"},
	shared("llm_requests"),
	shared("llm_failed"),
	shared("llm_errors"),
	shared("retries"),
	shared("clientLag"),
	shared("llm_conn_reused"),
	shared("llm_conn_opened"),
	answersOnly(measured(Figure[Call]{Key: "duration", Metric: "llm_embed_duration", Kind: Trend, Unit: Duration,
		Help: "t0 → the answer's last byte"}, duration(func(c *Call) measure.Duration { return c.Retrieval.Duration }), atEndOf)),
	// Due-time figures, for a call a schedule asked for: the lateness is the
	// load generator's whatever the call, and the whole answer counted from
	// the due time is its E2E from it. A non-streamed call has no first
	// token, so no ttftFromDue either.
	shared("dispatchDelay"),
	answersOnly(fromDue("e2eFromDue", "llm_e2e_from_due", "the whole answer counted from the due time",
		func(c *Call) measure.Duration { return c.Retrieval.Duration })),
	jsOnly("ttfb", "t0 → response headers", func(c *Call) any { return c.TTFB.JS() }),
	shared("clientParseTime"),
	answersOnly(Figure[Call]{Key: "batchSize", Metric: "llm_batch_size", Kind: Trend, Help: "inputs embedded, or documents reranked",
		js:      func(c *Call) any { return c.Retrieval.Items },
		samples: func(c *Call, e Emit) { e(c.End, float64(c.Retrieval.Items)) }}),
	answersOnly(Figure[Call]{Key: "inputTokens", Metric: "llm_input_tokens", Kind: Counter, js: inputTokens,
		Help: "the call's input tokens (the server's usage, else the tokenizer's count)",
		samples: func(c *Call, e Emit) {
			if c.Retrieval.TokenSource != "" && c.Retrieval.InputTokens > 0 {
				e(c.End, float64(c.Retrieval.InputTokens))
			}
		}}),
	answersOnly(Figure[Call]{Key: "inputTokensPerSec", Metric: "llm_input_tokens_per_sec", Kind: Trend, js: inputTokensPerSec,
		Help: "the call's input tokens over its duration",
		samples: func(c *Call, e Emit) {
			if v := c.Retrieval.InputTokensPerSec(); v > 0 {
				e(c.End, v)
			}
		}}),
	shared("requestBytes"),
	shared("llm_server_queue_time"),
	shared("llm_server_prefill_time"),
	shared("llm_goodput"),

	// The result's other keys: no k6 metric.
	shared("ok"),
	shared("status"),
	shared("error"),
	jsOnly("op", "embed or rerank", func(c *Call) any { return c.Retrieval.Op }),
	jsOnly("api", "the API the call spoke", func(c *Call) any { return c.Retrieval.API }),
	jsOnly("count", "vectors or ranked documents in the answer", func(c *Call) any { return c.Retrieval.Count }),
	jsOnly("dimension", "the vectors' length", func(c *Call) any {
		if c.Retrieval.Op != embed.OpEmbed || c.Retrieval.Count == 0 {
			return nil
		}
		return c.Retrieval.Dimension
	}),
	jsOnly("vectors", "the vectors, when the call kept them", vectors),
	jsOnly("results", "a rerank's documents, best first", rankedList),
	jsOnly("clientTopN", "whether the client cut the ranking to topN itself", func(c *Call) any { return c.Retrieval.ClientTopN }),
	jsOnly("responseBytes", "the answer body's size, in bytes", func(c *Call) any {
		if c.Status == 0 {
			return nil
		}
		return c.Retrieval.ResponseBytes
	}),
	shared("tokenSource"),
	shared("model"),
	shared("servedBy"),
	shared("route"),
	shared("requestId"),
	shared("traceId"),
	shared("serverTimings"),
	shared("proto"),
	shared("dueAt"),
}

// Table is the call's table of figures: RetrievalFigures for an embed or
// rerank call, Figures for a chat call.
func (c *Call) Table() []Figure[Call] {
	if c.Retrieval != nil {
		return RetrievalFigures
	}
	return Figures
}

// shared is the row of Figures with that JS key or metric: a figure both
// kinds of call have, defined once. The report keeps an embed or rerank
// call's figures in its own section, not in the chat calls' distributions,
// so the row's Keep stays behind.
func shared(name string) Figure[Call] {
	for _, f := range Figures {
		if (f.Key == name || f.Metric == name) && !f.PerAttempt {
			f.Keep, f.kept = Keep{}, nil
			return f
		}
	}
	panic("record: no figure " + name + " to share") // a typo in this table, caught by any test
}

// inputTokens is null when neither the server nor a tokenizer counted them.
func inputTokens(c *Call) any {
	if c.Retrieval.TokenSource == "" {
		return nil
	}
	return c.Retrieval.InputTokens
}

// inputTokensPerSec is null when the tokens or the duration are unknown.
func inputTokensPerSec(c *Call) any {
	if v := c.Retrieval.InputTokensPerSec(); v > 0 {
		return v
	}
	return nil
}

// vectors is result.vectors: the values only when the call kept them.
func vectors(c *Call) any {
	v := c.Retrieval.Vectors
	if v == nil {
		return nil
	}
	out := make([]any, len(v))
	for i := range v {
		out[i] = v[i]
	}
	return out
}

// rankedList is result.results of a rerank call, best first; null for embed.
func rankedList(c *Call) any {
	if c.Retrieval.Op != embed.OpRerank || !c.OK {
		return nil
	}
	out := make([]any, len(c.Retrieval.Ranked))
	for i, r := range c.Retrieval.Ranked {
		out[i] = map[string]any{"index": r.Index, "score": r.Score}
	}
	return out
}

// retrievalAttempts is result.attempts of an embed or rerank call: every
// attempt, with its TTFB and duration (a non-streamed attempt has no TTFT).
func retrievalAttempts(c *Call) any {
	out := make([]any, len(c.Attempts))
	for i, a := range c.Attempts {
		r := a.Result
		out[i] = map[string]any{
			"route": a.Route, "servedBy": a.Name, "ok": r.OK, "status": r.Status, "error": errorObject(r.Err),
			"ttfb": r.TTFB.JS(), "duration": measure.Between(r.Start, r.End).JS(),
		}
	}
	return out
}
