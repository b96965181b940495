package k6env

import (
	"time"

	"github.com/llmstream/xk6-llmstream/internal/schedule"
)

// dueSlot is one VU's claimed credit until its call takes it: the first
// call after next() (chat, embed or rerank) is the credit's send; later calls of the iteration
// (a conversation's next turns) have no due time.
// from is the schedule the credit came from, so that its send, cut short by
// the test's stop, can drop what the schedule still owes (binding/load/dropped.go).
type DueSlot struct {
	At   time.Time
	From *schedule.Schedule
}

func (d *DueSlot) Take() time.Time {
	at, _ := d.TakeFrom()
	return at
}

// takeFrom is take with the credit's schedule (nil without a credit).
func (d *DueSlot) TakeFrom() (time.Time, *schedule.Schedule) {
	if d == nil || d.At.IsZero() {
		return time.Time{}, nil
	}
	at, from := d.At, d.From
	d.At, d.From = time.Time{}, nil
	return at, from
}
