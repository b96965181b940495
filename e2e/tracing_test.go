package e2e

import (
	"encoding/json"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// traceparentE2E is a version-00 traceparent as the W3C spec writes it:
// trace id and parent id in lowercase hex, neither all zeros (checked
// apart), and the flags.
var traceparentE2E = regexp.MustCompile(`^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$`)

// TestTracingAgainstLLMSim: with the tracing option, every request llm-sim
// got carried a valid traceparent, each call's its own trace id and span
// id; the script's own traceparent reached the server unchanged; and the
// trace ids the report names as a category's slowest are requests the
// server got, among that category's slower half by the server's own time
// (llm-sim's trace, its bodies telling the long calls by max_tokens).
func TestTracingAgainstLLMSim(t *testing.T) {
	t.Parallel()
	run := runTraced(t, "traced_calls.js")
	require.Equal(t, 0, run.code, run.out)
	assert.Contains(t, run.out, "slowest calls by E2E (trace ids)")

	const own = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	traces, spans := map[string]bool{}, map[string]bool{}
	longTook := map[string]int64{} // a long call's trace id -> the server's time, ns
	requests, owns := 0, 0
	eachTraced(t, run.trace, func(r struct {
		Headers   map[string]string `json:"headers"`
		MaxTokens int               `json:"max_tokens"`
		ArrivalNS int64             `json:"arrival_ns"`
		DoneNS    int64             `json:"done_ns"`
	}) {
		requests++
		tp := r.Headers["Traceparent"]
		if tp == own {
			owns++
			return
		}
		m := traceparentE2E.FindStringSubmatch(tp)
		require.NotNil(t, m, "request %d: traceparent %q", requests, tp)
		assert.NotEqual(t, "00000000000000000000000000000000", m[1])
		assert.NotEqual(t, "0000000000000000", m[2])
		assert.False(t, traces[m[1]], "trace id %s sent twice", m[1])
		assert.False(t, spans[m[2]], "parent id %s sent twice", m[2])
		traces[m[1]], spans[m[2]] = true, true
		if r.MaxTokens >= 24 {
			longTook[m[1]] = r.DoneNS - r.ArrivalNS
		}
	})
	assert.Equal(t, 41, requests, "40 iterations and the script's own call")
	assert.Equal(t, 1, owns, "the script's own traceparent reached the server as it was")

	var rec struct {
		Categories map[string]struct {
			Slowest []struct {
				TraceID string  `json:"trace_id"`
				E2EMS   float64 `json:"e2e_ms"`
			} `json:"slowest_calls"`
		} `json:"categories"`
	}
	require.NoError(t, json.Unmarshal(run.report, &rec))
	long := rec.Categories["long"].Slowest
	require.Len(t, long, 5)
	assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", rec.Categories["own"].Slowest[0].TraceID, "its own trace id names the call")
	// The long calls' server times: the named ones are among the slower half.
	longTimes := make([]int64, 0, len(longTook))
	for _, ns := range longTook {
		longTimes = append(longTimes, ns)
	}
	require.Len(t, longTimes, 20)
	slices.Sort(longTimes)
	median := longTimes[len(longTimes)/2]
	for i, c := range long {
		require.True(t, traces[c.TraceID], "slowest %d: trace id %s is no request the server got", i, c.TraceID)
		ns, ok := longTook[c.TraceID]
		require.True(t, ok, "slowest %d: trace id %s is no long call", i, c.TraceID)
		assert.Contains(t, run.out, c.TraceID, "the text report names it")
		assert.GreaterOrEqual(t, ns, median, "slowest %d (%s, %.0f ms) is among the slower half by the server's time", i, c.TraceID, c.E2EMS)
		if i > 0 {
			assert.LessOrEqual(t, c.E2EMS, long[i-1].E2EMS, "slowest first")
		}
	}
}
