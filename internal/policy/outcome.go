package policy

import (
	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// Outcome is a finished call: every attempt it made, in order, on every route.
type Outcome[I any] struct {
	Attempts []Attempt[I] // the first in first, as nearly every call has one
	first    [1]Attempt[I]
	Canceled bool // the test ended during the call: it is not a data point
	// ClientLag is how late this process ran while the call did (none when
	// not measured): it is added to every timestamp the call took.
	ClientLag measure.Duration
}

// Attempt is one attempt (with its reconnections) of a call.
type Attempt[I any] struct {
	Route      *Route[I]
	Result     *stream.Result
	Reconnects int
}

// Final is the attempt whose answer the call returns: the last one.
func (o *Outcome[I]) Final() *Attempt[I] { return &o.Attempts[len(o.Attempts)-1] }

// OK says whether the call was answered.
func (o *Outcome[I]) OK() bool { return o.Final().Result.OK }

// TTFTCheck is whether this process made the final attempt's TTFT late
// (stream.TTFTCheck: its first token read with the next one, or its request
// sent late); a failed call is not judged.
func (o *Outcome[I]) TTFTCheck() stream.TTFTCheck {
	if !o.OK() {
		return stream.TTFTUnjudged
	}
	return o.Final().Result.TTFTCheck
}
