package runstate

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/servermetrics"
)

// The capacity search reads the servers' queue: after every scrape that read
// an endpoint's waiting count, the sum of every endpoint's latest reading.
func TestServerWaitingReachesTheSearch(t *testing.T) {
	type reading struct {
		at time.Time
		n  float64
	}
	var got []reading
	s := &ServerState{OnWaiting: func(at time.Time, n float64) { got = append(got, reading{at, n}) }}
	a, b := &serverWatch{}, &serverWatch{}
	t0 := time.Unix(1_000_000, 0)
	waiting := func(n float64) map[string]float64 { return map[string]float64{servermetrics.RequestsWaiting: n} }
	s.noteWaiting(a, servermetrics.Sample{At: t0, Gauges: waiting(3)})
	s.noteWaiting(b, servermetrics.Sample{At: t0.Add(time.Second), Gauges: waiting(4)})
	s.noteWaiting(a, servermetrics.Sample{At: t0.Add(2 * time.Second), Gauges: waiting(1)})
	s.noteWaiting(b, servermetrics.Sample{At: t0.Add(3 * time.Second), Gauges: map[string]float64{}}) // not read: nothing fed
	s.stopped = true
	s.noteWaiting(a, servermetrics.Sample{At: t0.Add(4 * time.Second), Gauges: waiting(9)}) // after the test
	require.Equal(t, []reading{{t0, 3}, {t0.Add(time.Second), 7}, {t0.Add(2 * time.Second), 5}}, got)
}
