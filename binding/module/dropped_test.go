package module

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A VU that finds the test stopping in next() pushes every credit the
// schedule still owes as a failed call, error_type dropped, with the VU's
// tags, once: the next VU to find it stopping pushes nothing more.
func TestStoppingPushesDroppedCreditsOnce(t *testing.T) {
	t.Parallel()
	vu := newTestVU(t, `const sched = llm.Schedule.constant({rate: 1000, duration: '10s'});`)
	require.NotNil(t, vu.run(`sched.next()`).Export(), "the first credit starts the clock")
	time.Sleep(50 * time.Millisecond)
	require.Empty(t, vu.drain()["llm_failed"], "owed while the test runs is late, not dropped")
	vu.rt.CancelContext()
	require.Nil(t, vu.run(`sched.next()`).Export(), "the test is stopping")
	got := vu.drain()
	dropped := vu.run(`sched.stats().dropped`).ToInteger()
	require.GreaterOrEqual(t, dropped, int64(40), "about 50 credits were due in 50 ms, 1 claimed")
	for _, name := range []string{"llm_requests", "llm_failed", "llm_errors"} {
		require.Len(t, got[name], int(dropped), "%s: one sample per dropped credit", name)
		for _, s := range got[name] {
			require.InDelta(t, 1, s.Value, 0)
			require.Equal(t, "dropped", tagOf(t, s, "error_type"))
			require.Equal(t, "1", tagOf(t, s, "vu_tag"), "the VU's own tags")
			_, hasModel := s.Tags.Get("model")
			require.False(t, hasModel, "no client took the credit")
		}
	}
	require.Nil(t, vu.run(`sched.next()`).Export())
	require.Empty(t, vu.drain()["llm_failed"], "each dropped credit is pushed once")
	require.Equal(t, dropped, vu.run(`sched.stats().dropped`).ToInteger(), "pushed, still dropped")
}
