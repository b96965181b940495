package report

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// Each instance closed its own gate: the merge lists them, is met only when
// all were, and is still open when one was.
func TestMergePrecisionListsTheInstances(t *testing.T) {
	s := func(v float64) *float64 { return &v }
	a := &runrecord.Record{Precision: &runrecord.Precision{Outcome: "met", Confidence: 0.95, Segment: "0:1/2", EndedS: s(40)}}
	b := &runrecord.Record{Precision: &runrecord.Precision{Outcome: "cap", Confidence: 0.95, Segment: "1/2:1", EndedS: s(60)}}
	none := &runrecord.Record{}
	got := mergePrecision([]*runrecord.Record{none, a, b})
	require.Equal(t, "cap", got.Outcome)
	require.InDelta(t, 60, *got.EndedS, 0)
	require.Len(t, got.Instances, 2)
	require.Contains(t, PrecisionText(got), "instance 0:1/2: met after 40.0 s")

	got = mergePrecision([]*runrecord.Record{a, a})
	require.Equal(t, "met", got.Outcome)
	open := &runrecord.Record{Precision: &runrecord.Precision{Outcome: "running", Segment: "1/2:1"}}
	got = mergePrecision([]*runrecord.Record{a, open})
	require.Equal(t, "running", got.Outcome)
	require.Nil(t, got.EndedS, "an instance still open at its end leaves the whole open")
	require.Nil(t, mergePrecision([]*runrecord.Record{none}))
}
