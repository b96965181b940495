package embed

import "github.com/llmstream/xk6-llmstream/internal/stream"

// StreamResult is the attempt as the retry policy and the call record read
// every attempt: its outcome, status, TTFB and moments. A non-streamed call
// has no first token, no inter-token gaps and no decode speed: those are
// Absent, never 0, so nothing that judges streams (TTFT thresholds, stall
// and gap findings) mistakes an embeddings answer for an instant one. Its
// whole duration is Result.Duration, a figure of its own (E2E stays Absent
// so llm_e2e remains the streamed calls' alone).
func (r *Result) StreamResult() *stream.Result {
	parse := r.Parse
	if parse < 0 {
		parse = 0
	}
	return &stream.Result{
		OK: r.OK, Err: r.Err, Status: r.Status, RetryAfter: r.RetryAfter,
		Model: r.Model, RequestID: r.RequestID, ServerTimings: r.ServerTimings, TokenSource: r.TokenSource,
		TTFB: r.TTFB, TTFT: stream.Absent, TTFTAnswer: stream.Absent, E2E: stream.Absent, TPOT: stream.Absent,
		GapMean: stream.Absent, SendWait: stream.Absent, ClientParse: parse,
		Connect: r.Connect, Proto: r.Proto, Start: r.Start, End: r.End,
	}
}
