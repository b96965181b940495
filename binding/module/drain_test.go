package module

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Every call, not most, brings its Server-Timing trailer to the result and to
// llm_server_queue_time (the trailer is read by the drain after [DONE]).
func TestEveryCallGetsItsServerTimingTrailer(t *testing.T) {
	t.Parallel()
	srv, _ := countingServer(t, streamThenLinger(20*time.Millisecond))
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q});`, srv.URL))
	const n = 20
	for i := range n {
		res := vu.chat(`{messages: []}`)
		require.Equal(t, true, res["ok"], "call %d: %v", i, res["error"])
		require.Equal(t, map[string]float64{"queue": 7}, res["serverTimings"], "call %d", i)
	}
	got := vu.drain()
	require.Len(t, got["llm_requests"], n)
	require.Len(t, got["llm_server_queue_time"], n, "every call's trailer reaches llm_server_queue_time")
	vu.closeIdle()
}

// The drain waits for a slow trailer, but its time is never the call's: e2e
// ends at the terminal event.
func TestDrainIsNotTimed(t *testing.T) {
	t.Parallel()
	const linger = 600 * time.Millisecond
	srv, _ := countingServer(t, streamThenLinger(linger))
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q});`, srv.URL))
	res := vu.chat(`{messages: []}`)
	require.Equal(t, true, res["ok"], "%v", res["error"])
	require.Equal(t, map[string]float64{"queue": 7}, res["serverTimings"], "a trailer within the drain bound arrives")
	require.Less(t, res["e2e"].(float64), float64(linger/time.Millisecond), "the drain is not in e2e") //nolint:forcetypeassert
	vu.closeIdle()
}

// k6 drains a body with io.Copy(io.Discard, body): the tap body is a
// WriterTo (internal/stream), and the stream is read all the same.
func TestTapBodyIsReadWithoutACopyBuffer(t *testing.T) {
	t.Parallel()
	srv, _ := streamServer(t, 0, 0, []string{"a", "b"})
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q});`, srv.URL))
	res := vu.chat(`{messages: []}`)
	require.Equal(t, true, res["ok"], "%v", res["error"])
	require.Equal(t, "ab", res["text"])
	vu.closeIdle()
}
