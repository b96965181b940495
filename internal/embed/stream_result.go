package embed

import "github.com/llmstream/xk6-llmstream/internal/stream"

// StreamResult is the attempt as the retry policy and the call record read
// every attempt: its outcome, status, TTFB and moments. A non-streamed call
// has no first token, no inter-token gaps and no decode speed: those are
// not measured, never 0, so nothing that judges streams (TTFT thresholds, stall
// and gap findings) mistakes an embeddings answer for an instant one. Its
// whole duration is Result.Duration, a figure of its own (E2E stays unmeasured
// so llm_e2e remains the streamed calls' alone).
// It is held in r: a later call makes it again in the same place.
func (r *Result) StreamResult() *stream.Result {
	r.stream = stream.Result{
		OK: r.OK, Err: r.Err, Status: r.Status, RetryAfter: r.RetryAfter,
		Model: r.Model, RequestID: r.RequestID, ServerTimings: r.ServerTimings, TokenSource: r.TokenSource,
		TTFB: r.TTFB, ClientParse: r.Parse.Or(0),
		Connect: r.Connect, Proto: r.Proto, Start: r.Start, End: r.End,
	}
	return &r.stream
}
