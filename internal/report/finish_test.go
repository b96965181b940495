package report

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// collectWith feeds a synthetic run's calls, changed by edit, to a collector.
func collectWith(s synth, edit func(i int, o *Observation)) *Run {
	c := NewCollector(Options{Start: t0})
	for i, o := range s.observations() {
		edit(i, o)
		c.Add(o)
	}
	return c.Snapshot()
}

// A server that names no finish on any answer (llm-d's simulator): every
// answer is counted, the text and HTML reports say so, and the finding speaks.
// A few such answers get the line but no finding.
func TestAnswersWithoutFinishReason(t *testing.T) {
	s := synth{seed: 1, stages: []synthStage{{12, 90}}}
	r := collectWith(s, func(_ int, o *Observation) { o.FinishOmitted = true })
	all := r.Category(runrecord.AllCategories)
	require.Equal(t, all.Requests, all.FinishOmitted)

	fs := Diagnose(r)
	require.Equal(t, []string{"finish_omitted"}, ids(fs))
	require.Equal(t, "info", fs[0].Severity)
	require.InDelta(t, 1.0, fs[0].Values["share"], 1e-9)

	text := RenderText(r, fs, nil)
	require.Contains(t, string(RenderHTML(r, nil, RenderOptions{})), "answers ended without a finish reason")
	require.Contains(t, text, fmt.Sprintf("%d answers ended without a finish reason: the server or a gateway omits it", all.Requests))
	require.Contains(t, text, "[finish_omitted]")
	require.NotContains(t, text, "nothing stands out")

	few := collectWith(s, func(i int, o *Observation) { o.FinishOmitted = i%10 == 0 })
	require.Empty(t, Diagnose(few), "a tenth of the answers is a line, not a finding")
	require.Contains(t, RenderText(few, nil, nil), "answers ended without a finish reason")

	none := collectWith(s, func(int, *Observation) {})
	require.NotContains(t, RenderText(none, nil, nil), "without a finish reason")
}

// With several clients the line names the client whose server omits it.
func TestAnswersWithoutFinishReasonPerClient(t *testing.T) {
	s := synth{seed: 2, stages: []synthStage{{12, 60}}}
	r := collectWith(s, func(i int, o *Observation) {
		o.Name = "vllm"
		if i%2 == 0 {
			o.Name, o.FinishOmitted = "llm-d", true
		}
	})
	text := RenderText(r, Diagnose(r), nil)
	require.Contains(t, text, "answers ended without a finish reason: the server or a gateway omits it — client llm-d")
	require.NotContains(t, text, "— client vllm\n")
	require.Contains(t, text, "[finish_omitted] llm-d: ")
}

// The count survives the run record and sums over a merge's instances.
func TestAnswersWithoutFinishReasonMerged(t *testing.T) {
	var recs []*runrecord.Record
	total := uint64(0)
	for i, seg := range []string{"0:1/2", "1/2:1"} {
		r := collectWith(synth{seed: uint64(5 + i), stages: []synthStage{{8, 30}}}, func(_ int, o *Observation) { o.FinishOmitted = true })
		total += r.Category(runrecord.AllCategories).FinishOmitted
		recs = append(recs, recordThrough(t, seg+".json", r, testInfo(seg)))
	}
	merged, err := Merge(recs...)
	require.NoError(t, err)
	require.Equal(t, total, merged.Categories[runrecord.AllCategories].FinishOmitted)
	require.Contains(t, RenderRecordText(merged), fmt.Sprintf("%d answers ended without a finish reason", total))
}
