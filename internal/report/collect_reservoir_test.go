package report

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// A kept call keeps each figure its row counts and no stand-in for the
// others: a failed call's TTFT goes to the bootstrap, its E2E and TPOT do
// not, and a call with no figure at all is not kept.
func TestTheReservoirKeepsOnlyCountedFigures(t *testing.T) {
	t0 := time.Unix(1000, 0)
	call := func(ok bool, ttft measure.Duration) *Observation {
		c := &Observation{Result: &stream.Result{OK: ok, Start: t0, End: t0.Add(time.Second), TTFT: ttft,
			E2E: measure.Of(time.Second), TPOT: measure.Of(20 * time.Millisecond), OutputTokens: 40}}
		if !ok {
			c.Err = &stream.Error{Type: stream.ErrNetwork, Message: "reset"}
		}
		return c
	}
	answered, ok := sampleOf(call(true, measure.Of(100*time.Millisecond)))
	require.True(t, ok)
	failed, ok := sampleOf(call(false, measure.Of(100*time.Millisecond)))
	require.True(t, ok, "its TTFT counts")
	_, ok = sampleOf(call(false, measure.Duration{}))
	assert.False(t, ok, "failed before its first token: nothing to keep")

	items := []Sample{answered, failed}
	assert.Equal(t, []float64{100, 100}, samplesOf(items, record.DistTTFT))
	assert.Equal(t, []float64{1000}, samplesOf(items, record.DistE2E), "a failed call's E2E is no answer's")
	assert.Equal(t, []float64{20}, samplesOf(items, record.DistTPOT))
	assert.Nil(t, samplesOf(items, record.DistGap), "a per-event figure is not sampled per call")
}
