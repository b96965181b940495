package record

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/embed"
	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// TestDueTimeFiguresOfEveryKindOfCall: one definition of the due-time
// figures for chat and retrieval calls; unknown (null, no sample), never 0,
// for what a call cannot have.
func TestDueTimeFiguresOfEveryKindOfCall(t *testing.T) {
	t0 := time.Unix(1000, 0)
	due := t0.Add(-40 * time.Millisecond)
	chat := &Call{Result: &stream.Result{OK: true, Start: t0, End: t0.Add(time.Second),
		TTFT: measure.Of(100 * time.Millisecond), E2E: measure.Of(time.Second)}, Due: due}
	js := chat.JS()
	require.InDelta(t, 40, js["dispatchDelay"], 1e-9)
	require.InDelta(t, 140, js["ttftFromDue"], 1e-9)
	require.InDelta(t, 1040, js["e2eFromDue"], 1e-9)

	r := &embed.Result{Op: embed.OpEmbed, OK: true, Start: t0, End: t0.Add(50 * time.Millisecond),
		Duration: measure.Of(50 * time.Millisecond), TTFB: measure.Of(30 * time.Millisecond), Parse: measure.Of(time.Millisecond), Items: 1}
	emb := &Call{Result: r.StreamResult(), Retrieval: r, Due: due}
	js = emb.JS()
	require.InDelta(t, 40, js["dispatchDelay"], 1e-9)
	require.InDelta(t, 90, js["e2eFromDue"], 1e-9)
	require.NotContains(t, js, "ttftFromDue")
	got := map[string][]float64{}
	for i := range RetrievalFigures {
		f := &RetrievalFigures[i]
		f.Samples(emb, func(_ time.Time, v float64) { got[f.Metric] = append(got[f.Metric], v) })
	}
	require.Equal(t, []float64{40}, got["llm_dispatch_delay"])
	require.Equal(t, []float64{90}, got["llm_e2e_from_due"])
	require.NotContains(t, got, "llm_ttft_from_due")

	emb.Due = time.Time{} // closed model: no due time, none invented
	js = emb.JS()
	require.Nil(t, js["dispatchDelay"])
	require.Nil(t, js["e2eFromDue"])
	require.Nil(t, js["dueAt"])
	require.False(t, emb.DispatchDelay().Known(), "no due time: %v", emb.DispatchDelay())
	failed := &Call{Result: &stream.Result{Start: t0}, Due: due}
	require.Equal(t, measure.Of(40*time.Millisecond), failed.DispatchDelay(), "a failed call was sent late all the same")
	require.False(t, failed.FromDue(failed.TTFT).Known(), "no TTFT, none from the due time either")
}
