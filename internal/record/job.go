package record

// The table of a job's figures: a live conversation's or an agent job's,
// recorded once when it ends. A job is not a call (it has turns, think time
// and tools, and no first token of its own), so it has its own table of the
// same Figure type over its own record: its JS object (conv.end()), its k6
// samples and its metrics' registration walk it as a call's do, and
// docs/figures_test.go holds it to index.d.ts, docs/client.md,
// docs/metrics.md and the dashboard.

import (
	"time"

	"github.com/llmstream/xk6-llmstream/internal/conversation"
	"github.com/llmstream/xk6-llmstream/internal/measure"
)

// Job kinds, the job tag of its samples.
const (
	JobConversation = "conversation"
	JobAgent        = "agent"
)

// Job is one finished conversation or agent job.
type Job struct {
	conversation.Job
	Kind     string
	Category string // the conversation's category, else its first turn's ("" = default)
	// End is when its last answer (or tool) ended: the job's time runs from
	// its first call's send to it, so a script that ends a conversation
	// late does not lengthen it.
	End time.Time
	// EndReason is "" for a job the script ended, else why it ended by
	// itself: the error type of the turn that failed (a history beyond the
	// model's context is the server's 400, http_4xx).
	EndReason string
	// BadToolCalls are an agent's calls of a tool it was not given or with
	// arguments that are not a JSON object (the model was told; the job
	// went on).
	BadToolCalls int
	// Load is the load the job's first call met when it was sent: the
	// report counts the job in that call's load stage.
	Load Load
}

// Load is the load a call met when it started: what puts it in a load stage.
type Load struct {
	Active, VUs int
	Rate        float64
}

// LoadOf is the load c met.
func LoadOf(c *Call) Load { return Load{Active: c.Active, VUs: c.VUs, Rate: c.Rate} }

// JobFigures is every figure of a job.
var JobFigures = []Figure[Job]{ //nolint:gochecknoglobals // the read-only table of a job's figures
	{Metric: "llm_jobs", Kind: Counter, Help: "live conversations and agent jobs ended", samples: func(j *Job, e Emit) { e(j.End, 1) }},
	{Key: "ok", Metric: "llm_job_failed", Kind: Rate, Help: "1 for a job that failed, 0 otherwise", js: func(j *Job) any { return !j.Failed },
		samples: func(j *Job, e Emit) { e(j.End, boolValue(j.Failed)) }},
	jobTime("duration", "llm_job_duration", "its first call's send → its last answer's end", func(j *Job) time.Duration { return j.Duration(j.End) }),
	jobTime("modelTime", "llm_job_model_time", "its calls' own time, retries included", func(j *Job) time.Duration { return j.Model }),
	jobTime("thinkTime", "llm_job_think_time", "the pauses waited between turns", func(j *Job) time.Duration { return j.Think }),
	jobTime("toolTime", "llm_job_tool_time", "its tools' run time", func(j *Job) time.Duration { return j.Tool }),
	jobCount("turns", "llm_job_turns", "user turns", func(j *Job) int64 { return int64(j.Turns) }),
	jobCount("steps", "llm_job_steps", "model calls (an agent's steps)", func(j *Job) int64 { return int64(j.Steps) }),
	// An agent's only: a conversation has no tools to call wrongly.
	{Key: "badToolCalls", Metric: "llm_job_bad_tool_calls", Kind: Trend,
		Help: "the model's calls of a tool it was not given or with arguments that are not an object", js: func(j *Job) any {
			if j.Kind != JobAgent {
				return nil
			}
			return int64(j.BadToolCalls)
		}, samples: func(j *Job, e Emit) {
			if j.Kind == JobAgent {
				e(j.End, float64(j.BadToolCalls))
			}
		}},
	{Key: "tokensIn", Metric: "llm_job_tokens_in", Kind: Trend, Help: "prompt tokens over every call", js: func(j *Job) any {
		if !j.InKnown {
			return nil
		}
		return j.TokensIn
	}, samples: func(j *Job, e Emit) {
		if j.InKnown {
			e(j.End, float64(j.TokensIn))
		}
	}},
	jobCount("tokensOut", "llm_job_tokens_out", "output tokens over every call", func(j *Job) int64 { return j.TokensOut }),

	{Key: "kind", Help: "conversation or agent", js: func(j *Job) any { return j.Kind }},
	{Key: "endReason", Help: "why the job ended by itself, null when the script ended it", js: func(j *Job) any {
		if j.EndReason == "" {
			return nil
		}
		return j.EndReason
	}},
	{Key: "ttftByTurn", Help: "each turn's TTFT", js: func(j *Job) any {
		out := make([]any, len(j.TTFTs))
		for i, d := range j.TTFTs {
			out[i] = d.JS()
		}
		return out
	}},
}

// JS is the job's JS object (conv.end()): times in ms, unknown figures null.
func (j *Job) JS() map[string]any { return jsObject(JobFigures, j) }

// jobTime is a job's duration figure (a job that has not started has none).
func jobTime(key, metric, help string, get func(*Job) time.Duration) Figure[Job] {
	return Figure[Job]{Key: key, Metric: metric, Kind: Trend, Unit: Duration, Help: help,
		js: func(j *Job) any {
			if j.Start.IsZero() {
				return nil
			}
			return measure.MS(get(j))
		},
		samples: func(j *Job, e Emit) {
			if !j.Start.IsZero() {
				e(j.End, measure.MS(get(j)))
			}
		}}
}

// jobCount is a per-job count: a Trend, so thresholds and the report read
// its distribution over jobs (p(95) turns), not a sum.
func jobCount(key, metric, help string, get func(*Job) int64) Figure[Job] {
	return Figure[Job]{Key: key, Metric: metric, Kind: Trend, Help: help,
		js:      func(j *Job) any { return get(j) },
		samples: func(j *Job, e Emit) { e(j.End, float64(get(j))) }}
}
