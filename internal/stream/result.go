package stream

import (
	"time"

	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/protocol"
)

// Token sources, from the most to the least exact.
const (
	TokensFromStreamedUsage = "usage_stream" // cumulative usage on every event
	TokensFromUsage         = "usage"        // the final usage report
	TokensFromTokenizer     = "tokenizer"    // a client-side tokenizer over the text
	TokensFromEvents        = "events"       // one token per output event
)

// Result holds the figures of one finished call. Its one-byte fields are
// kept together after OK: apart, each took a word of its own, which put a
// Result (one per attempt) a size class up.
type Result struct {
	OK bool
	// Sent: the request's headers went out. False when the connection,
	// DNS or TLS failed first: such a request never reached the server.
	Sent bool
	// FinishOmitted: the answer (or one of several) is complete but its
	// server named no finish (FinishSource).
	FinishOmitted bool
	Cache         CacheState // whether the prompt hit the server's prefix cache
	TTFTCheck     TTFTCheck  // whether this process made the TTFT late: the first token read with the next, or the request sent late (result.ttftLate)

	Err       *Error
	Text      string
	Reasoning string
	ToolCalls []ToolCall
	// Thoughts are the answer's signed reasoning, in order (Anthropic
	// thinking blocks, Gemini thought signatures): nil unless the server
	// signed some. A conversation sends them back verbatim.
	Thoughts []Thought
	// ResponseID is the id the server gave its answer ("" when none):
	// Responses' previous_response_id.
	ResponseID   string
	FinishReason string
	// FinishSource says how FinishReason is known (FinishFromServer,
	// FinishInferred, FinishNone); "" for protocols without finish reasons
	// (sse).
	FinishSource string
	Usage        *protocol.Usage
	TokenSource  string
	Model        string
	RequestID    string
	Status       int              // the HTTP status of the response read (0 when none arrived)
	RetryAfter   measure.Duration // the server's Retry-After, none when it gave none

	TTFB, TTFT, TTFTAnswer, E2E, TPOT measure.Duration // none when not measurable
	TokensPerSec                      float64          // 0 when not measurable
	ClientParse                       time.Duration
	Chunks                            int
	OutputTokens                      int64
	Stalls                            int
	Gaps                              Gaps             // every inter-token gap, in order (with n > 1, each choice's in turn)
	Choices                           []Choice         // with n > 1: each answer (Text, Reasoning, FinishReason, Gaps are the first's)
	GapMean                           measure.Duration // none with fewer than two output events
	ServerTimings                     map[string]float64
	Starved                           int              // idle timers that fired far too late (a starved client), from the watchdog
	Connect                           time.Duration    // dial + TLS time of this call's connections (0 when reused)
	SendWait                          measure.Duration // t0 → the request began to go out, Connect left out; none when not known (no request written)
	Proto                             string           // the response's protocol ("HTTP/1.1", "HTTP/2.0"); "" without a response

	// Moments, for the timestamps of samples.
	Start, FirstOutAt, LastOutAt, End time.Time
}

// Finish judges the call and computes its figures. A call that was not failed
// and whose stream did not end with a complete answer is truncated
// (completeness.go).
func (c *Call) Finish() *Result {
	c.releaseClock()
	now := time.Now()
	if c.end.IsZero() {
		c.end = now
	}
	if c.Start.IsZero() { // failed before the request reached the transport
		c.Start = c.end
	}
	c.judgeEnd()
	c.cfg.Sizes.learn(c)
	r := &Result{
		OK:            c.err == nil,
		Err:           c.err,
		Text:          c.text.String(),
		Reasoning:     c.reasoning.String(),
		ToolCalls:     c.tools,
		Thoughts:      c.signed.thoughts(c.reasoning.String()),
		ResponseID:    c.responseID,
		FinishReason:  c.finish,
		Usage:         c.usage,
		Model:         c.model,
		RequestID:     c.requestID,
		Chunks:        c.chunks,
		Stalls:        c.stalls,
		Gaps:          c.gaps,
		ServerTimings: c.timings,
		Start:         c.Start,
		FirstOutAt:    c.firstOut,
		LastOutAt:     c.lastOut,
		End:           c.end,
		TTFB:          measure.Between(c.Start, c.Headers),
		TTFT:          measure.Between(c.Start, c.firstOut),
		TTFTAnswer:    measure.Between(c.Start, c.firstAns),
		E2E:           measure.Between(c.Start, c.end),
		Starved:       c.starved,
		Connect:       c.connect,
	}
	if w := c.cfg.Watchdog; w != nil {
		r.Starved += w.Starved()
		r.Connect += w.Connect()
	}
	if c.reader != nil {
		r.ClientParse = c.busy + c.reader.busy
	}
	c.fromResponse(r, now)
	r.Cache = cacheState(c.usage)
	if c.gapN > 0 {
		r.GapMean = measure.Of(c.gapSum / time.Duration(c.gapN))
	}
	r.OutputTokens, r.TokenSource = c.tokens()
	c.decodeSpeed(r)
	c.finishChoices(r)
	c.settleFinish(r)
	// The send wait leaves the connection's set-up out, so a call that
	// opened its connection is judged by it too: at a test's start, when
	// every call opens one at once, the requests' wait for a CPU is all that
	// is left over the server's time (the connect itself waits in its system
	// call, package connect). Over HTTP/2 a request does not wait for a
	// stream the server allows: the module's transport opens another
	// connection instead (HTTP2Config StrictMaxConcurrentRequests off).
	r.SendWait = c.sendWait(r.Connect)
	_, r.Sent = c.sentAt()
	r.TTFTCheck = r.Gaps.checkTTFT(c.firstWindow, c.firstWindowKnown, r.SendWait)
	return r
}

// sendWait is how long after t0 the request began to go out, the
// connection's set-up left out; not known without a response. The set-up is
// the dial and TLS handshake themselves when the transport reported them
// (SetUp), else the whole connect.
func (c *Call) sendWait(connect time.Duration) measure.Duration {
	at, sent := c.sentAt()
	if !sent || c.resp == nil || c.Start.IsZero() {
		return measure.Duration{}
	}
	setUp := max(connect, 0)
	if own := time.Duration(c.setUp.Load()); own > 0 && setUp > 0 {
		setUp = min(own, setUp) // its own dial may have served another request: never more than its connect
	}
	return measure.Of(max(at.Sub(c.Start)-setUp, 0))
}

// tokens picks the most exact output-token count available.
func (c *Call) tokens() (int64, string) {
	switch {
	case c.cumulative && c.cumTokens > 0:
		return c.cumTokens, TokensFromStreamedUsage
	case c.usage != nil && c.usage.CompletionTokens > 0:
		return c.usage.CompletionTokens, TokensFromUsage
	case c.cfg.CountTokens != nil && c.chunks > 0:
		n := c.cfg.CountTokens(c.text.String()) + c.cfg.CountTokens(c.reasoning.String())
		for _, t := range c.tools {
			n += c.cfg.CountTokens(t.Arguments)
		}
		return int64(n), TokensFromTokenizer
	default:
		return int64(c.chunks), TokensFromEvents
	}
}

// decodeSpeed fills TPOT and tokens/s: (t_last − t_first) / (N − n_first). The
// tokens of the first event are excluded because their time is the TTFT's.
func (c *Call) decodeSpeed(r *Result) {
	if c.firstOut.IsZero() {
		return
	}
	nFirst := c.firstTokens
	if nFirst <= 0 {
		nFirst = 1
		if c.cfg.CountTokens != nil && !c.cumulative {
			if n := c.cfg.CountTokens(c.firstText); n > 0 {
				nFirst = int64(n)
			}
		}
	}
	rest := r.OutputTokens - nFirst
	span := c.lastOut.Sub(c.firstOut)
	if rest <= 0 || span <= 0 {
		return
	}
	r.TPOT = measure.Of(span / time.Duration(rest))
	r.TokensPerSec = float64(rest) / span.Seconds()
}

// ErrorType is the failure's class, "" for a call that succeeded.
func (r *Result) ErrorType() string {
	if r.Err == nil {
		return ""
	}
	return string(r.Err.Type)
}

// PromptTokens is the server's prompt token count, 0 when it reported none.
func (r *Result) PromptTokens() int64 {
	if r.Usage == nil {
		return 0
	}
	return r.Usage.PromptTokens
}

// CachedTokens is the server's cached prompt token count, 0 when it
// reported none.
func (r *Result) CachedTokens() int64 {
	if r.Usage == nil {
		return 0
	}
	return r.Usage.CachedTokens
}
