package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServerMetricsAgainstLLMSim runs the overloaded step with serverMetrics
// on llm-sim's vLLM exposition and checks the server's view against the
// simulator's own ground truth: its finished requests are the calls the
// client made, its queue-time mean is the trace's, the report cites the
// server's queue, and a threshold on the server's queue fails the run.
func TestServerMetricsAgainstLLMSim(t *testing.T) {
	t.Parallel()
	run := runTraced(t, "server_queue.js")
	require.Equal(t, 99, run.code, "the threshold on the server's queue must fail the run:\n%s", run.out)
	assert.Contains(t, run.out, "✗ llm_server_requests_waiting")
	assert.Contains(t, run.out, "✓ llm_server_preemptions")
	assert.Contains(t, run.out, "The server's own view")
	assert.NotContains(t, run.out, "metrics-secret-e2e")
	assert.NotContains(t, string(run.report), "metrics-secret-e2e")
	var rec struct {
		Categories map[string]struct {
			Requests uint64 `json:"requests"`
			Failures uint64 `json:"failures"`
		} `json:"categories"`
		Findings []struct {
			ID       string   `json:"id"`
			Evidence []string `json:"evidence"`
		} `json:"findings"`
		Server []struct {
			Engine   string   `json:"engine"`
			Missing  string   `json:"missing"`
			Warnings []string `json:"warnings"`
			Run      struct {
				Counters   map[string]float64 `json:"counters"`
				Histograms map[string]struct {
					Count float64  `json:"count"`
					Mean  *float64 `json:"mean"`
				} `json:"histograms"`
			} `json:"run"`
			Stages []struct {
				Name string `json:"name"`
			} `json:"stages"`
		} `json:"server"`
	}
	require.NoError(t, json.Unmarshal(run.report, &rec))
	require.Len(t, rec.Server, 1)
	sv := rec.Server[0]
	assert.Equal(t, "llm-sim", sv.Engine)
	assert.Empty(t, sv.Missing)
	assert.Empty(t, sv.Warnings, "a baseline before the first call and a final snapshot after the last")
	all := rec.Categories["all"]
	require.Positive(t, all.Requests)
	assert.Zero(t, all.Failures)
	assert.InDelta(t, float64(all.Requests), sv.Run.Counters["requests_finished"], 0, "the server finished the calls the client completed")
	assert.Len(t, sv.Stages, 2, "a window per load stage")

	// The trace's ground truth: every generation request's queue time.
	var n, queueNS float64
	eachTraced(t, run.trace, func(r struct {
		Op         string `json:"op"`
		EnqueuedNS int64  `json:"enqueued_ns"`
		AdmittedNS int64  `json:"admitted_ns"`
	}) {
		if r.Op == "" && r.AdmittedNS != 0 {
			n++
			queueNS += float64(r.AdmittedNS - r.EnqueuedNS)
		}
	})
	require.InDelta(t, float64(all.Requests), n, 0, "the trace has every call")
	q := sv.Run.Histograms["queue"]
	require.NotNil(t, q.Mean)
	assert.InDelta(t, n, q.Count, 0)
	assert.InDelta(t, queueNS/n/1e9, *q.Mean, 1e-6, "the server's queue-time mean is the trace's")

	var cited bool
	for _, fd := range rec.Findings {
		if fd.ID != "queue_bound" {
			continue
		}
		for _, e := range fd.Evidence {
			cited = cited || strings.HasPrefix(e, "server ")
		}
	}
	assert.True(t, cited, "queue_bound cites the server's own queue: %+v", rec.Findings)
}
