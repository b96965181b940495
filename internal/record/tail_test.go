package record

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// TestTailTimeIsTheEndAfterTheLastOutput: the stream's tail is its last
// output event → its end (the terminal event or the body's end), sampled at
// the end, the same value in the JS result, k6 and the report; a call
// without output, or a failed one (its end is no answer's), has none.
func TestTailTimeIsTheEndAfterTheLastOutput(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var row *Figure[Call]
	for i := range Figures {
		if Figures[i].Metric == "llm_stream_tail" {
			row = &Figures[i]
		}
	}
	require.NotNil(t, row)
	samples := func(c *Call) (at []time.Time, vals []float64) {
		row.Samples(c, func(when time.Time, v float64) { at, vals = append(at, when), append(vals, v) })
		return at, vals
	}
	answer := &Call{Result: &stream.Result{OK: true, Start: t0, FirstOutAt: t0.Add(100 * time.Millisecond),
		LastOutAt: t0.Add(900 * time.Millisecond), End: t0.Add(940 * time.Millisecond), E2E: measure.Of(940 * time.Millisecond)}}
	require.InDelta(t, 40, answer.JS()["tailTime"], 1e-9)
	at, vals := samples(answer)
	require.Equal(t, []float64{40}, vals)
	require.Equal(t, []time.Time{answer.End}, at, "sampled when the stream ended")
	kept, ok := row.Kept(answer)
	require.True(t, ok)
	require.InDelta(t, 40, kept, 1e-9)
	require.Equal(t, Dist("stream_tail"), row.Keep.Dist)

	silent := &Call{Result: &stream.Result{OK: true, Start: t0, End: t0.Add(time.Second), E2E: measure.Of(time.Second)}}
	require.Nil(t, silent.JS()["tailTime"], "no output, no tail")
	_, vals = samples(silent)
	require.Empty(t, vals)

	cut := &Call{Result: &stream.Result{Start: t0, FirstOutAt: t0.Add(100 * time.Millisecond), LastOutAt: t0.Add(500 * time.Millisecond),
		End: t0.Add(3 * time.Second), Err: &stream.Error{Type: stream.ErrTimeoutIdle}}}
	require.Nil(t, cut.JS()["tailTime"], "an idle timeout is not the stream's end")
	_, vals = samples(cut)
	require.Empty(t, vals)
	_, ok = row.Kept(cut)
	require.False(t, ok)
}
