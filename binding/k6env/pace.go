package k6env

import (
	"time"

	"go.k6.io/k6/js/modules"
	"go.k6.io/k6/lib"

	"github.com/llmstream/xk6-llmstream/internal/conversation"
)

// vuPace is a VU's user-centric timing: the VU is one user, whose turns go
// out an interval apart across its conversations.
type VUPace struct {
	last time.Time // the user's last send (zero before its first)
}

// next is when the user's next turn is due.
func (p *VUPace) Next(vu modules.VU, pace conversation.Pace, now time.Time) time.Time {
	if !p.last.IsZero() {
		return pace.Next(p.last, now)
	}
	anchor := now
	if es := lib.GetExecutionState(vu.Context()); es != nil && es.HasStarted() {
		anchor = now.Add(-es.GetCurrentTestRunDuration())
	}
	user := 0
	if st := vu.State(); st != nil && st.VUIDGlobal > 0 {
		user = int(st.VUIDGlobal - 1) // #nosec G115 -- a VU number fits an int
	}
	return pace.First(anchor, user)
}

// sent notes a turn's send.
func (p *VUPace) Sent(at time.Time) { p.last = at }
