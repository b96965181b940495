package conversation

import (
	"time"

	"github.com/llmstream/xk6-llmstream/internal/measure"
)

// Job is one conversation's or agent job's own figures: what its user
// waited for in all, and how that splits into the model's time, the tools'
// and the user's own think time.
type Job struct {
	Start time.Time
	// Model is the sum of the calls' durations (each call's t0 to its end),
	// Tool the tools' run time, Think the pauses waited.
	Model, Tool, Think time.Duration
	Turns, Steps       int // user turns; model calls (an agent's steps)
	TokensIn           int64
	TokensOut          int64
	// InKnown is false once a call's server reported no prompt count: the
	// job's input total is then unknown, not a smaller number.
	InKnown bool
	Failed  bool
	TTFTs   []measure.Duration // each call's TTFT in order
}

// NewJob starts a job at start.
func NewJob(start time.Time) *Job { return &Job{Start: start, InKnown: true} }

// Call adds one finished model call.
func (j *Job) Call(e2e time.Duration, ttft measure.Duration, promptTokens, outputTokens int64, ok bool) {
	j.Steps++
	if e2e > 0 {
		j.Model += e2e
	}
	j.TTFTs = append(j.TTFTs, ttft)
	if promptTokens > 0 {
		j.TokensIn += promptTokens
	} else {
		j.InKnown = false
	}
	j.TokensOut += outputTokens
	if !ok {
		j.Failed = true
	}
}

// Duration is the job's time from its start to end.
func (j *Job) Duration(end time.Time) time.Duration { return end.Sub(j.Start) }
