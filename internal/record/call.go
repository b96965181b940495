// Package record is the one definition of a finished call's figures. A Call
// is what the k6 binding builds once per call; the JS result, the k6 samples
// and the report all read it: the first two through the Figures table
// (figures.go), the report directly (report.Observation is a Call).
//
// Nothing here imports k6: the binding turns a Figure's metric into a k6
// metric and its values into samples.
package record

import (
	"time"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/embed"
	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/sample"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// Call is one finished call: the figures of the attempt that ended it (the
// embedded Result, the call's timings), every attempt it made, who answered,
// the load it met and the figures that belong to the call as a whole.
type Call struct {
	// The final attempt's figures (the call's timings are its): the very
	// Result its Attempts entry holds, shared, not copied (a record is built
	// once per call and nothing writes a Result after Finish).
	*stream.Result

	// Attempts is every attempt of the call, in order, on every route.
	Attempts []Attempt

	// Origin is who answered and what the call was: the route that ended
	// it. Its Model is the one the client asked for (Result.Model is the
	// server's): spell which one.
	Origin

	// Tag looks up one of the call's k6 tags (nil: the call has none), for
	// leaving calls out by tag.
	Tag func(name string) (string, bool)

	// The load the call met when it started.
	Active int // streams in flight in this process (concurrency)
	VUs    int // k6's active VUs (0 outside a k6 run); Origin.Rate is the arrival rate

	// Due is when the schedule wanted the call sent (its credit's due time,
	// Schedule.next()), zero for a call no schedule asked for: closed-model
	// loops, and a conversation's later turns (think time is not lateness).
	Due time.Time

	// ClientLag is how late this process ran while the call did (the Go
	// scheduler's latency and timer lateness): time added to every timestamp
	// the call took. Unknown when the call was too short to be measured.
	ClientLag measure.Duration
	// EventLag is the longest wait of an event for its JS callback (0 when
	// the call had no callback).
	EventLag time.Duration

	// Cost is what the call cost: every attempt's tokens priced by its
	// route's client. Priced is false when no route had prices; Currency is
	// "mixed" when the routes' currencies differ.
	Cost     config.Cost
	Currency string
	Priced   bool

	// Goodput is whether the call met the client's SLO (Unjudged without one).
	Goodput Verdict
	// Regression is whether the call's TTFT was above the loaded baseline's
	// P95 for its category (Unjudged without a baseline, or a failed call).
	Regression Verdict

	// Stopped is whether the test's stop (a signal, test.abort(), a
	// threshold's abortOnFail, a scenario's end) came during the call: it
	// has no verdict and no sample, and the report counts it in its calls'
	// figures alone.
	Stopped bool

	// With Origin.GapSamples 'sampled', KeepGap says which gaps k6 gets,
	// and GapsUnsampled counts those it left out; the record itself keeps
	// every gap.
	KeepGap       sample.Keep
	GapsUnsampled int

	// Retrieval is the final attempt's figures of a non-streamed embed or
	// rerank call (nil for a chat call): its figures are the table
	// RetrievalFigures, not Figures.
	Retrieval *embed.Result
}

// Attempt is one HTTP attempt of a call (with its reconnections).
type Attempt struct {
	Route      string
	Name       string // the client that made it
	Result     *stream.Result
	Reconnects int
}

// Verdict is a yes/no figure that may not be judged: null in the JS result,
// no sample in k6.
type Verdict int8

// Verdicts.
const (
	Unjudged Verdict = iota
	Yes
	No
)

// VerdictOf is Yes or No.
func VerdictOf(b bool) Verdict {
	if b {
		return Yes
	}
	return No
}

// Retries counts every attempt after the first, on whichever route.
func (c *Call) Retries() int { return max(len(c.Attempts)-1, 0) }

// Reconnects counts the reopened raw streams of every attempt.
func (c *Call) Reconnects() int {
	n := 0
	for _, a := range c.Attempts {
		n += a.Reconnects
	}
	return n
}

// DispatchDelay is send − due: how late this load generator sent a call a
// schedule asked for (never below 0: a send a hair before its due time is
// on time). None for a call without a due time.
func (c *Call) DispatchDelay() measure.Duration {
	if c.Due.IsZero() || c.Start.IsZero() {
		return measure.Duration{}
	}
	return measure.Of(max(c.Start.Sub(c.Due), 0))
}

// FromDue is the moment d after the call's send counted from its due time
// instead: what a user who arrived on schedule waited, the load
// generator's lateness included. None without a due time or when d was
// not measured (a call without a first token has no TTFT from the due
// time either).
func (c *Call) FromDue(d measure.Duration) measure.Duration {
	late, ok := c.DispatchDelay().Get()
	if !ok {
		return measure.Duration{}
	}
	return d.Plus(late)
}

// TTFTLate is whether this process made the TTFT late (stream.TTFTCheck:
// its first token read with the next one, or its request sent late); a
// failed call is not judged.
func (c *Call) TTFTLate() Verdict {
	if !c.OK {
		return Unjudged
	}
	late, known := c.TTFTCheck.Late()
	if !known {
		return Unjudged
	}
	return VerdictOf(late)
}

// TailTime is how long the stream went on after its last output event: to
// the terminal event or the body's end, what the server sent after the last
// token (a finish reason, the usage, [DONE]). None without output, and
// when the end was not seen (a failed call: cut off, timed out or
// refused).
func (c *Call) TailTime() measure.Duration {
	if !c.OK || c.LastOutAt.IsZero() || c.End.IsZero() {
		return measure.Duration{}
	}
	return measure.Of(max(c.End.Sub(c.LastOutAt), 0))
}

// ReasoningTime is how long the model reasoned before its answer began: from
// its first output (reasoning) to its first answer output (text or a tool
// call), what separates llm_ttft from llm_ttft_answer. None for a call that
// streamed no reasoning, or ended before it answered: a model that does not
// reason has no reasoning time, not a zero one.
func (c *Call) ReasoningTime() measure.Duration {
	first, ok := c.TTFT.Get()
	answer, answered := c.TTFTAnswer.Get()
	if c.Reasoning == "" || !ok || !answered {
		return measure.Duration{}
	}
	return measure.Of(answer - first)
}
