package report

// The report's one entry for a process's calls. The binding hands every
// finished call's record, and every finished conversation job, to an
// Intake; which section keeps what (the calls' figures, the embed and rerank
// calls, TTFT by images, conversation turns and jobs) is decided here, next
// to the sections, so a new section is wired in the report alone and the
// k6 glue never learns the report's layout.

import "github.com/llmstream/xk6-llmstream/internal/record"

// Intake routes finished calls and jobs to the report's sections. It is safe
// for concurrent use (each section locks its own state).
type Intake struct {
	calls         *Collector
	retrieval     *RetrievalCollector
	images        *ImageCollector
	conversations *ConversationCollector
}

// NewIntake makes the sections, each leaving out what opt says.
func NewIntake(opt Options) *Intake {
	return &Intake{
		calls:         NewCollector(opt),
		retrieval:     NewRetrievalCollector(opt),
		images:        NewImageCollector(opt),
		conversations: NewConversationCollector(opt),
	}
}

// Add routes one finished call. An embed or rerank call has a section of its
// own; a chat call counts in the calls' figures, in TTFT by images and, as a
// conversation's turn, in the turns. A call the test's stop came during
// counts in the calls' figures alone (its error type says whether the stop
// cut it): it is in no section's TTFT, and an embed or rerank call so cut is
// in none. A nil call is ignored.
func (in *Intake) Add(o *Observation) {
	switch {
	case o == nil:
	case o.Retrieval != nil:
		if !o.Stopped {
			in.retrieval.Add(o)
		}
	case o.Stopped:
		in.calls.Add(o)
	default:
		in.calls.Add(o)
		in.images.Add(o)
		in.conversations.Add(o) // a turn; it leaves other calls out
	}
}

// AddJob records a finished conversation or agent job.
func (in *Intake) AddJob(j *record.Job) { in.conversations.AddJob(j) }

// Snapshot is the run so far with every section's groups.
func (in *Intake) Snapshot() *Run {
	run := in.calls.Snapshot()
	run.SetSections(in.retrieval.Groups(), in.images.Groups())
	run.SetConversations(in.conversations.Groups())
	return run
}
