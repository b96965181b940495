package report

import (
	"html"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/servermetrics"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// failedCall is a call that failed with what came back: a status (0: none)
// after its request went out, or not.
func failedCall(start time.Time, status int, sent bool, et stream.ErrorType) *Observation {
	o := call(start, "", 100)
	o.OK, o.Status, o.Sent = false, status, sent
	o.Err = &stream.Error{Type: et, Message: string(et)}
	return o
}

// reachRun is a run of answered calls and failed ones, each as it failed.
func reachRun(answered int, failed ...*Observation) *Run {
	c := NewCollector(Options{Start: t0})
	for i := range answered {
		o := call(t0.Add(time.Duration(i)*50*time.Millisecond), "", 100)
		o.Status, o.Sent = 200, true
		c.Add(o)
	}
	for _, o := range failed {
		c.Add(o)
	}
	return c.Snapshot()
}

func repeat(n int, f func(i int) *Observation) []*Observation {
	out := make([]*Observation, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

func countLine(t *testing.T, r *Run, v servermetrics.View) string {
	t.Helper()
	text, doc, _, err := Render(r, nil, RenderOptions{Server: []servermetrics.View{v}})
	require.NoError(t, err)
	for _, l := range strings.Split(text, "\n") {
		if line, ok := strings.CutPrefix(l, "  "); ok && strings.HasPrefix(line, "requests: the server finished") {
			assert.True(t, strings.Contains(string(doc), html.EscapeString(line)), "the HTML page has the line too")
			return line
		}
	}
	t.Fatalf("no count line in\n%s", text)
	return ""
}

// Calls refused at connect never reached the server: 60 answered and 332
// refused against a server that finished 60 is no mismatch.
func TestCallsThatNeverReachedTheServerAreNotHeldAgainstIt(t *testing.T) {
	refused := repeat(332, func(i int) *Observation {
		return failedCall(t0.Add(time.Duration(i)*time.Millisecond), 0, false, stream.ErrNetwork)
	})
	r := reachRun(60, refused...)
	v := serverView(60, 0, servermetrics.GaugeStats{Samples: 20}, nil)
	assert.Empty(t, ids(diagnoseServer(r, []servermetrics.View{v}, nil)))
	assert.Equal(t, "requests: the server finished 60; the client's: 60 answered (2xx), 332 never sent (connection refused, DNS or TLS failure) — consistent",
		countLine(t, r, v))

	v = serverView(20, 0, servermetrics.GaugeStats{Samples: 20}, nil)
	fs := diagnoseServer(r, []servermetrics.View{v}, nil)
	require.Equal(t, []string{"server_count_mismatch"}, ids(fs))
	assert.Contains(t, fs[0].Evidence[0], "the server finished 20 requests, 40 fewer than the 60 it answered with a 2xx")
}

// An error status or no answer may or may not be in the server's count:
// the count is held against a range, from the 2xx answers to every request
// that went out.
func TestRefusedAndUnansweredRequestsWidenTheRange(t *testing.T) {
	failed := append(repeat(10, func(i int) *Observation {
		return failedCall(t0.Add(time.Duration(i)*time.Millisecond), 429, true, stream.ErrHTTP429)
	}),
		repeat(5, func(i int) *Observation {
			return failedCall(t0.Add(time.Duration(i)*time.Millisecond), 0, true, stream.ErrNetwork)
		})...)
	r := reachRun(100, failed...)
	for _, n := range []float64{100, 108, 115} {
		v := serverView(n, 0, servermetrics.GaugeStats{Samples: 20}, nil)
		assert.Empty(t, ids(diagnoseServer(r, []servermetrics.View{v}, nil)), "%.0f is within 100–115", n)
	}
	v := serverView(140, 0, servermetrics.GaugeStats{Samples: 20}, nil)
	fs := diagnoseServer(r, []servermetrics.View{v}, nil)
	require.Equal(t, []string{"server_count_mismatch"}, ids(fs))
	assert.Contains(t, fs[0].Evidence[0], "the server finished 140 requests, 25 more than the 115 the client sent it "+
		"(100 answered (2xx), 10 refused with an error status, 5 sent without an answer)")
}

// Every attempt is a request: a call retried after a 503 made two.
func TestEveryAttemptIsARequest(t *testing.T) {
	c := NewCollector(Options{Start: t0})
	for i := range 50 {
		o := call(t0.Add(time.Duration(i)*50*time.Millisecond), "", 100)
		first := stream.Result{Status: 503, Sent: true}
		o.Status, o.Sent = 200, true
		o.Attempts = []record.Attempt{{Result: &first}, {Result: o.Result}}
		c.Add(o)
	}
	r := c.Snapshot()
	assert.Equal(t, runrecord.ServerReach{Answered: 50, Refused: 50}, r.Category(runrecord.AllCategories).Reach)
}

// A restart splits the server's count: what it finished between the last
// scrape and the restart is lost, so the count is not compared, and the
// section says why instead of blaming a gateway.
func TestACounterResetLeavesTheCountUncompared(t *testing.T) {
	refused := repeat(332, func(i int) *Observation {
		return failedCall(t0.Add(time.Duration(i)*time.Millisecond), 0, false, stream.ErrNetwork)
	})
	r := reachRun(200, refused...)
	v := serverView(60, 0, servermetrics.GaugeStats{Samples: 20}, nil)
	v.Run.Resets = map[string]int{servermetrics.RequestsFinished: 1}
	assert.Empty(t, ids(diagnoseServer(r, []servermetrics.View{v}, nil)))
	assert.Contains(t, countLine(t, r, v), "not compared: the server's count began again from 0 during the run (a restart)")
}

// A window that does not span the run (a late baseline, no final snapshot)
// cannot be held against every call either.
func TestAPartialWindowLeavesTheCountUncompared(t *testing.T) {
	r := reachRun(200)
	v := serverView(150, 0, servermetrics.GaugeStats{Samples: 20}, nil)
	v.Partial = "the baseline snapshot came 2.1s after the test started"
	assert.Empty(t, ids(diagnoseServer(r, []servermetrics.View{v}, nil)))
	assert.Contains(t, countLine(t, r, v), "not compared: the server's window does not span the run: the baseline snapshot came 2.1s after the test started")
}

// A merged record holds the instances' requests together against the
// server's count, with the same range.
func TestAMergedRecordComparesLikeWithLike(t *testing.T) {
	var recs []*runrecord.Record
	for i, seg := range []string{"0:1/2", "1/2:1"} {
		refused := repeat(100, func(j int) *Observation {
			return failedCall(t0.Add(time.Duration(j)*time.Millisecond), 0, false, stream.ErrNetwork)
		})
		r := reachRun(30, refused...)
		info := &runrecord.RunInfo{Segment: seg, SegmentSequence: "0,1/2,1"}
		v := serverView(60, 0, servermetrics.GaugeStats{Samples: 30}, nil)
		_, _, raw, err := Render(r, nil, RenderOptions{Server: []servermetrics.View{v}, Info: info})
		require.NoError(t, err)
		rec, err := runrecord.ParseRecord(seg, raw)
		require.NoError(t, err, i)
		recs = append(recs, rec)
	}
	merged, err := Merge(recs...)
	require.NoError(t, err)
	assert.False(t, slices.Contains(ids(merged.Findings), "server_count_mismatch"), "60 answered of 260 calls, 60 finished")
}
