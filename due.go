package llmstream

import (
	"time"

	"github.com/llmstream/xk6-llmstream/internal/schedule"
)

// dueSlot is one VU's claimed credit until its call takes it: the first
// call after next() (chat, embed or rerank) is the credit's send; later calls of the iteration
// (a conversation's next turns) have no due time.
// from is the schedule the credit came from, so that its send, cut short by
// the test's stop, can drop what the schedule still owes (dropped.go).
type dueSlot struct {
	at   time.Time
	from *schedule.Schedule
}

func (d *dueSlot) take() time.Time {
	at, _ := d.takeFrom()
	return at
}

// takeFrom is take with the credit's schedule (nil without a credit).
func (d *dueSlot) takeFrom() (time.Time, *schedule.Schedule) {
	if d == nil || d.at.IsZero() {
		return time.Time{}, nil
	}
	at, from := d.at, d.from
	d.at, d.from = time.Time{}, nil
	return at, from
}
