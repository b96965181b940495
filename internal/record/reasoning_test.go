package record

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// TestReasoningTimeIsUnknownWithoutReasoning: the time a model reasoned
// before it answered is TTFT to the first answer output, sampled when the
// answer began; a call with no reasoning, or none that reached an answer,
// has no reasoning time (null, no sample), never 0.
func TestReasoningTimeIsUnknownWithoutReasoning(t *testing.T) {
	t0 := time.Unix(1000, 0)
	samples := func(c *Call) (at []time.Time, vals []float64) {
		table := c.Table()
		for i := range table {
			if f := &table[i]; f.Metric == "llm_reasoning_time" {
				f.Samples(c, func(when time.Time, v float64) { at, vals = append(at, when), append(vals, v) })
			}
		}
		return at, vals
	}
	thinker := &Call{Result: &stream.Result{OK: true, Start: t0, End: t0.Add(2 * time.Second), Reasoning: "let me see",
		TTFT: measure.Of(100 * time.Millisecond), TTFTAnswer: measure.Of(1300 * time.Millisecond), E2E: measure.Of(2 * time.Second)}}
	require.InDelta(t, 1200, thinker.JS()["reasoningTime"], 1e-9)
	at, vals := samples(thinker)
	require.Equal(t, []float64{1200}, vals)
	require.Equal(t, []time.Time{t0.Add(1300 * time.Millisecond)}, at, "sampled when the answer began")

	plain := &Call{Result: &stream.Result{OK: true, Start: t0, End: t0.Add(time.Second),
		TTFT: measure.Of(100 * time.Millisecond), TTFTAnswer: measure.Of(100 * time.Millisecond), E2E: measure.Of(time.Second)}}
	require.Nil(t, plain.JS()["reasoningTime"], "a model that does not reason has no reasoning time")
	_, vals = samples(plain)
	require.Empty(t, vals)

	cut := &Call{Result: &stream.Result{Start: t0, End: t0.Add(time.Second), Reasoning: "hmm",
		TTFT: measure.Of(100 * time.Millisecond)}}
	require.Nil(t, cut.JS()["reasoningTime"], "reasoning that never reached an answer")
	_, vals = samples(cut)
	require.Empty(t, vals)
}
