package report

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/embed"
	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// canceledCall is a call the test's stop cut in flight: its headers came,
// a first token too, then the VU's context ended.
func canceledCall(start time.Time) *Observation {
	o := failedCall(start, 200, true, stream.ErrCanceled)
	o.TTFT, o.E2E, o.OutputTokens = measure.Of(msD(5000)), measure.Of(msD(9000)), 40
	return o
}

// interruptedRun: 100 answered calls, then a SIGINT cut 7 in flight.
func interruptedRun(t *testing.T) *Run {
	t.Helper()
	r := reachRun(100, repeat(7, func(i int) *Observation { return canceledCall(t0.Add(time.Duration(i) * time.Millisecond)) })...)
	r.SetInterruption(&runrecord.Interruption{At: t0.Add(12300 * time.Millisecond), By: runrecord.StoppedBySignal, Detail: "SIGINT",
		RanS: 12.3, PlannedS: ptr(30.0)})
	return r
}

// An interrupted run says so in the record and both reports: when and why
// it stopped, how long it ran of its plan, and the calls cut in flight,
// counted as failed and in no latency figure.
func TestAnInterruptedRunIsMarkedInTheRecordAndBothReports(t *testing.T) {
	r := interruptedRun(t)
	text, doc, raw, err := Render(r, nil, RenderOptions{})
	require.NoError(t, err)
	const line = "interrupted: stopped by a signal (SIGINT) at 2026-01-02T03:04:12Z, after 12.3s of the planned 30s; " +
		"7 calls in flight were cancelled (counted as failed, error type canceled, in no latency figure)"
	assert.Contains(t, text, "⚠ "+line)
	assert.True(t, strings.Contains(string(doc), `id="interrupted">⚠ `+line), "the HTML page says it")

	var rec runrecord.Record
	require.NoError(t, json.Unmarshal(raw, &rec))
	require.NotNil(t, rec.Interrupted)
	assert.Equal(t, runrecord.StoppedBySignal, rec.Interrupted.By)
	assert.EqualValues(t, 7, rec.Interrupted.Canceled)
	assert.InDelta(t, 30, *rec.Interrupted.PlannedS, 0)
	all := rec.Categories[runrecord.AllCategories]
	assert.EqualValues(t, 107, all.Requests)
	assert.EqualValues(t, 7, all.Failures)
	assert.Equal(t, map[string]uint64{"canceled": 7}, all.Errors)
	assert.EqualValues(t, 100, all.Metrics["ttft"].Count, "a cancelled call's partial TTFT is no figure")
	assert.EqualValues(t, 100*20, all.OutputTokens, "nor are its tokens")
}

// A run that ran to its end says nothing of the kind, and its record has
// no interruption.
func TestARunThatRanToItsEndIsNotMarked(t *testing.T) {
	text, doc, raw, err := Render(reachRun(100), nil, RenderOptions{})
	require.NoError(t, err)
	assert.NotContains(t, text, "interrupted")
	assert.False(t, strings.Contains(string(doc), "interrupted"))
	assert.NotContains(t, string(raw), `"interrupted"`)
}

// The planned length may be a bound (an iterations executor's maxDuration)
// or unknown; the cause may be the script or a threshold.
func TestTheInterruptionSaysWhatItKnows(t *testing.T) {
	i := runrecord.Interruption{By: runrecord.StoppedByAbort, Detail: "no model loaded", RanS: 4, PlannedS: ptr(600.0), PlannedAtMost: true, Canceled: 1}
	assert.Contains(t, i.Describe(), "stopped by test.abort(): no model loaded")
	assert.Contains(t, i.Describe(), "after 4s of at most 10m0s planned; 1 call in flight was cancelled")
	i = runrecord.Interruption{By: runrecord.StoppedByThreshold, Detail: "llm_failed: rate<0.1", RanS: 2.5}
	assert.Contains(t, i.Describe(), "stopped by a threshold with abortOnFail (llm_failed: rate<0.1)")
	assert.Contains(t, i.Describe(), "after 2.5s (its planned length is not known); no call was in flight")
}

// A comparison with a baseline says when either run was cut short: its
// figures cover only the part that ran.
func TestAComparisonSaysWhichRunWasInterrupted(t *testing.T) {
	_, _, raw, err := Render(interruptedRun(t), nil, RenderOptions{})
	require.NoError(t, err)
	base, err := runrecord.ParseRecord("base.json", raw)
	require.NoError(t, err)
	text, _, rec, err := Render(reachRun(100), nil, RenderOptions{Baseline: base})
	require.NoError(t, err)
	assert.Contains(t, text, "the baseline was interrupted (by a signal (SIGINT) after 12.3s of the planned 30s), this run ran to its end")
	assert.Contains(t, string(rec), "the baseline was interrupted")

	text, _, _, err = Render(interruptedRun(t), nil, RenderOptions{Baseline: base})
	require.NoError(t, err)
	assert.Contains(t, text, "both runs were interrupted")
}

// Calls the stop cut are not "every call failed": a run stopped before any
// answer is marked interrupted, not all_failed.
func TestCancelledCallsAloneAreNotAllFailed(t *testing.T) {
	r := reachRun(0, repeat(5, func(i int) *Observation { return canceledCall(t0.Add(time.Duration(i) * time.Millisecond)) })...)
	assert.NotContains(t, ids(Diagnose(r)), "all_failed")
	r = reachRun(0, append(repeat(5, func(i int) *Observation { return canceledCall(t0) }),
		failedCall(t0, 0, false, stream.ErrNetwork))...)
	assert.Contains(t, ids(Diagnose(r)), "all_failed", "a failure of the service's is still one")
}

// A merged record is interrupted when an instance was: the first stop, and
// every instance's cancelled calls.
func TestAMergedRecordKeepsTheInterruption(t *testing.T) {
	var recs []*runrecord.Record
	for i, seg := range []string{"0:1/2", "1/2:1"} {
		r := interruptedRun(t)
		if i == 1 {
			r.SetInterruption(&runrecord.Interruption{At: t0.Add(11 * time.Second), By: runrecord.StoppedBySignal, Detail: "SIGTERM", RanS: 11})
		}
		_, _, raw, err := Render(r, nil, RenderOptions{Info: &runrecord.RunInfo{Segment: seg, SegmentSequence: "0,1/2,1"}})
		require.NoError(t, err)
		rec, err := runrecord.ParseRecord(seg, raw)
		require.NoError(t, err)
		recs = append(recs, rec)
	}
	merged, err := Merge(recs...)
	require.NoError(t, err)
	require.NotNil(t, merged.Interrupted)
	assert.Equal(t, "SIGTERM", merged.Interrupted.Detail, "the first stop")
	assert.EqualValues(t, 14, merged.Interrupted.Canceled)
	assert.Contains(t, RenderRecordText(merged), "⚠ interrupted: stopped by a signal (SIGTERM)")
	assert.True(t, strings.Contains(string(RenderRecordHTML(merged, "t")), `id="interrupted"`))
}

// Embed and rerank calls the stop cut in flight are cancelled calls of
// their own section, as chat calls are of theirs: counted in calls, failed
// and cancelled, in no figure, and in the interruption's count.
func TestCancelledEmbedAndRerankCallsAreCountedAsSuch(t *testing.T) {
	rc := NewRetrievalCollector(Options{})
	for i := range 4 {
		rc.Add(retrievalCall(embed.OpEmbed, "batch_8", true, t0.Add(time.Duration(i)*100*time.Millisecond), 50*time.Millisecond, 8, 800))
	}
	cut := func(op, cat string) *Observation {
		o := retrievalCall(op, cat, false, t0.Add(time.Second), 3*time.Second, 8, 0)
		o.Err = &stream.Error{Type: stream.ErrCanceled, Message: "context canceled"}
		o.Retrieval.TTFB, o.Retrieval.Parse = measure.Of(2*time.Second), measure.Of(time.Second) // partial figures of a call cut short
		return o
	}
	rc.Add(cut(embed.OpEmbed, "batch_8"))
	rc.Add(cut(embed.OpEmbed, "batch_8"))
	rc.Add(cut(embed.OpRerank, "docs_4"))
	r := interruptedRun(t)
	r.SetSections(rc.Groups(), nil)

	text, doc, raw, err := Render(r, nil, RenderOptions{})
	require.NoError(t, err)
	assert.Contains(t, text, "10 calls in flight were cancelled", "7 chat calls and 3 embed or rerank calls")
	var rec runrecord.Record
	require.NoError(t, json.Unmarshal(raw, &rec))
	assert.EqualValues(t, 10, rec.Interrupted.Canceled)
	require.Len(t, rec.Retrieval, 2)
	emb := rec.Retrieval[0]
	assert.EqualValues(t, 6, emb.Calls)
	assert.EqualValues(t, 2, emb.Failed)
	assert.Equal(t, map[string]uint64{"canceled": 2}, emb.Errors)
	assert.EqualValues(t, 4, emb.Metrics["ttfb"].Count, "a cancelled call's partial TTFB is no figure")
	assert.EqualValues(t, 4, emb.Metrics["parse"].Count)
	assert.Nil(t, rec.Retrieval[1].Metrics["ttfb"], "the rerank group's only call was cancelled")

	// the section's own column, in the text and the HTML
	var header, row string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, "cancelled") && strings.Contains(l, "failed") && header == "" {
			header = l
		}
		if strings.HasPrefix(strings.TrimSpace(l), "rerank") {
			row = l
		}
	}
	require.NotEmpty(t, header, text)
	require.NotEmpty(t, row, text)
	assert.Equal(t, []string{"rerank", "docs_4", "4", "VUs", "1", "1", "1"}, strings.Fields(row)[:7], "calls 1, failed 1, cancelled 1")
	assert.True(t, strings.Contains(string(doc), "<th>cancelled</th>"), "the HTML table has the column")

	// two instances' records merge to the sum
	var recs []*runrecord.Record
	for _, seg := range []string{"0:1/2", "1/2:1"} {
		_, _, raw, err := Render(r, nil, RenderOptions{Info: &runrecord.RunInfo{Segment: seg, SegmentSequence: "0,1/2,1"}})
		require.NoError(t, err)
		one, err := runrecord.ParseRecord(seg, raw)
		require.NoError(t, err)
		recs = append(recs, one)
	}
	merged, err := Merge(recs...)
	require.NoError(t, err)
	assert.EqualValues(t, 20, merged.Interrupted.Canceled)
	assert.EqualValues(t, 4, merged.Retrieval[0].Errors["canceled"])
}
