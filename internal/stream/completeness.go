package stream

import "fmt"

// Whether a stream that ended holds a complete answer is decided from all the
// evidence it carries, not from one marker:
//
//   - a terminal event (a finish reason, message_stop, response.completed,
//     done: true…) completes the answer;
//   - a [DONE] sentinel completes it too when something came before it:
//     servers such as llm-d's inference simulator stream the tokens, the usage
//     chunk and [DONE] and never name a finish. A [DONE] with nothing at all
//     before it proves nothing, and RequireFinishReason restores the strict
//     rule (only a named finish completes);
//   - an error event fails the call whatever follows it, and a body that ends
//     without either (cut mid-event, or between events) is truncated.
//
// The finish of a complete answer is then the one the server named, or, when
// it named none and the usage report's output count equals the request's
// limit, the protocol's length finish, inferred and said so (FinishSource);
// otherwise it is unknown. Answers that ended without a finish reason are
// counted (Result.FinishOmitted), so a server or gateway that leaves it out
// is reported without turning the test red.

// Finish sources: how a call's finish reason came to be known.
const (
	FinishFromServer = "server"   // an event named it
	FinishInferred   = "inferred" // nobody named it; the output count reached the request's limit (Spec.LengthFinish)
	FinishNone       = "none"     // nobody named it: unknown
)

// judgeEnd fails the call if its stream did not end with a complete answer.
func (c *Call) judgeEnd() {
	spec := c.cfg.Spec
	if spec.CompleteAtEOF && c.cleanEnd {
		c.terminal = true // raw event streams have no terminal event: a clean end completes them
	}
	if c.err != nil {
		return
	}
	switch {
	case c.sawDone && !c.terminal && c.cfg.RequireFinishReason:
		c.Fail(ErrTruncated, "stream ended with [DONE] but no finish reason")
	case c.sawDone && !c.terminal && c.chunks == 0 && c.usage == nil:
		c.Fail(ErrTruncated, "stream ended with [DONE] and nothing before it: no output, finish reason or usage")
	case c.terminal, c.sawDone:
		c.judgeChoices()
	default:
		c.Fail(ErrTruncated, "stream ended without a terminal event")
	}
}

// judgeChoices fails a call that ended without [DONE] while one of its
// answers (n > 1) still had no finish: the stream was cut after another
// answer's end. Under RequireFinishReason any answer without a named finish
// fails the call.
func (c *Call) judgeChoices() {
	if c.cfg.Spec.CompleteAtEOF {
		return // no finish reasons in the protocol: nothing to require
	}
	if c.choices == nil {
		if c.finish == "" && c.cfg.RequireFinishReason {
			c.Fail(ErrTruncated, "the answer ended without a finish reason (requireFinishReason)")
		}
		return
	}
	for i, ch := range c.choices {
		if ch.finish != "" {
			continue
		}
		switch {
		case c.cfg.RequireFinishReason:
			c.Fail(ErrTruncated, fmt.Sprintf("the answer of choice %d ended without a finish reason (requireFinishReason)", i))
		case !c.sawDone:
			c.Fail(ErrTruncated, fmt.Sprintf("stream ended without a finish reason for choice %d", i))
		}
	}
}

// settleFinish fills the finish of a single answer whose server named none
// and says how each answer's finish is known; it runs after judgeEnd, on
// the result.
func (c *Call) settleFinish(r *Result) {
	spec := c.cfg.Spec
	if spec.CompleteAtEOF {
		return // a raw event stream has no finish: FinishSource stays empty
	}
	if len(r.Choices) > 0 {
		// The usage report counts every answer together: no one answer's
		// count can be held against the limit.
		for i := range r.Choices {
			r.Choices[i].FinishSource = namedOrNone(r.Choices[i].FinishReason)
			r.FinishOmitted = r.FinishOmitted || r.OK && r.Choices[i].FinishReason == ""
		}
		r.FinishSource = r.Choices[0].FinishSource
		return
	}
	r.FinishSource = namedOrNone(r.FinishReason)
	if !r.OK || r.FinishReason != "" {
		return
	}
	r.FinishOmitted = true
	if u := r.Usage; u != nil && c.cfg.MaxTokens > 0 && u.CompletionTokens == c.cfg.MaxTokens && spec.LengthFinish != "" {
		r.FinishReason, r.FinishSource = spec.LengthFinish, FinishInferred
	}
}

func namedOrNone(finish string) string {
	if finish != "" {
		return FinishFromServer
	}
	return FinishNone
}
