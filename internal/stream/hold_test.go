package stream

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// countingHolder counts the holds a call takes on its clock.
type countingHolder struct{ holds, releases int }

func (h *countingHolder) Arrival(now time.Time) time.Time { return now }
func (h *countingHolder) Hold()                           { h.holds++ }
func (h *countingHolder) Release()                        { h.releases++ }
func (h *countingHolder) Window() (time.Duration, bool)   { return 0, false }

// A call holds its connection's clock from the moment it gets it to its
// first output, once: a connection given up for another one (a redirect, a
// reopened stream) is released then, and Finish releases one that gave no
// output.
func TestCallHoldsItsClockUntilTheFirstOutput(t *testing.T) {
	t.Parallel()
	body := "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n" +
		"data: {\"choices\":[{\"delta\":{\"content\":\"b\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	first, second := &countingHolder{}, &countingHolder{}
	var seen []int
	c := openAICall(t)
	c.cfg.OnEvent = func(RawEvent) { seen = append(seen, second.releases) }
	c.SetArrivalClock(first)
	require.Equal(t, 1, first.holds)
	c.SetArrivalClock(second) // the request moved to another connection
	require.Equal(t, 1, first.releases, "the first connection is released when the call moves")
	require.NoError(t, c.Consume(strings.NewReader(body)))
	require.Equal(t, []int{0, 1, 1}, seen, "held until the first output is read")
	c.Finish()
	require.Equal(t, [2]int{1, 1}, [2]int{second.holds, second.releases}, "one hold, released once")

	third := &countingHolder{}
	c = openAICall(t)
	c.SetArrivalClock(third)
	c.Reopen() // the stream broke: the next connection brings its own clock
	require.Equal(t, 1, third.releases)
	c.Finish()
	require.Equal(t, 1, third.releases)
}
