package servermetrics

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exposition is a vLLM-style page with a finished-request counter and,
// when started is not 0, the process's start time.
func exposition(finished float64, started float64) *snapshot {
	body := fmt.Sprintf("# TYPE vllm:request_success_total counter\nvllm:request_success_total{finished_reason=\"stop\"} %g\n", finished)
	if started != 0 {
		body += fmt.Sprintf("# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds %g\n", started)
	}
	p, err := parseBody([]byte(body), "text/plain")
	if err != nil {
		panic(err)
	}
	return reduce(p.families, "")
}

func historyOfSnapshots(snaps ...*snapshot) *history {
	h := &history{max: 100}
	acc := newAccumulator()
	for i, s := range snaps {
		p, _ := acc.add(t0.Add(time.Duration(i)*time.Second), s)
		h.add(p)
	}
	return h
}

// A counter that went down splits the run: the window that holds the reset
// says so, one that does not says nothing.
func TestAWindowSaysWhenACounterResetInside(t *testing.T) {
	h := historyOfSnapshots(exposition(100, 0), exposition(160, 0), exposition(20, 0), exposition(50, 0))
	w, ok := h.window("", time.Time{}, time.Time{})
	require.True(t, ok)
	assert.Equal(t, map[string]int{RequestsFinished: 1}, w.Resets, "the total and its reason's series reset once, together")
	assert.InDelta(t, 60+20+30, w.Counters[RequestsFinished], 1e-9, "the pieces between scrapes")
	before, ok := h.window("before", t0, t0.Add(time.Second))
	require.True(t, ok)
	assert.Nil(t, before.Resets)
	after, ok := h.window("after", t0.Add(2*time.Second), time.Time{})
	require.True(t, ok)
	assert.Nil(t, after.Resets, "the reset came before this window's first scrape")
}

// The reset stays known after the history thinned the point that saw it.
func TestAResetSurvivesThinning(t *testing.T) {
	snaps := []*snapshot{exposition(10, 0), exposition(20, 0), exposition(5, 0)}
	for i := range 20 {
		snaps = append(snaps, exposition(float64(10+i), 0))
	}
	h := historyOfSnapshots(snaps...)
	h.max = 4
	p := h.points
	h.points = nil
	for _, x := range p {
		h.add(x)
	}
	w, ok := h.window("", time.Time{}, time.Time{})
	require.True(t, ok)
	assert.Equal(t, 1, w.Resets[RequestsFinished])
}

// A new process start is a restart even when its counter has climbed past
// the old process's: its whole value is the increase.
func TestANewProcessStartIsARestart(t *testing.T) {
	h := historyOfSnapshots(exposition(100, 1000), exposition(150, 2000))
	w, ok := h.window("", time.Time{}, time.Time{})
	require.True(t, ok)
	assert.InDelta(t, 150, w.Counters[RequestsFinished], 1e-9, "not 150 − 100")
	assert.Equal(t, 1, w.Resets[RequestsFinished])
	same := historyOfSnapshots(exposition(100, 1000), exposition(150, 1000))
	w, _ = same.window("", time.Time{}, time.Time{})
	assert.InDelta(t, 50, w.Counters[RequestsFinished], 1e-9)
	assert.Nil(t, w.Resets)
}
