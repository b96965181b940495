package llmstream

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// With the default gapSamples ('sampled') the process sends at most
// gapSampleRate gap samples a second; what it leaves out is counted, and each
// call's own gaps (result.gaps) stay whole.
func TestSampledGapsAreCappedAndCounted(t *testing.T) {
	t.Parallel()
	tokens := make([]string, 40)
	for i := range tokens {
		tokens[i] = "t"
	}
	srv, _ := streamServer(t, 0, 0, tokens)
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, gapSampleRate: 1});`, srv.URL))
	total := 0
	for i := range 3 {
		res := vu.chat(`{messages: []}, {gaps: true}`)
		require.Equal(t, true, res["ok"], "call %d", i)
		gaps := res["gaps"].([]float64) //nolint:forcetypeassert
		require.Len(t, gaps, 39, "result.gaps keeps every gap of the call")
		total += len(gaps)
		if i == 0 {
			// The sampler learns the offered rate over its first window
			// (200 ms), keeping everything meanwhile; after it, ~40 gaps in
			// far less than 40 s is over the cap of 1 a second.
			time.Sleep(250 * time.Millisecond)
		}
	}
	got := vu.drain()
	sent := len(got["llm_inter_token_gap"])
	unsampled := 0.0
	for _, s := range got["llm_gaps_unsampled"] {
		unsampled += s.Value
	}
	require.Equal(t, total, sent+int(unsampled), "every gap is sent or counted as left out")
	require.Positive(t, unsampled, "the cap left gaps out")
	require.Less(t, sent, total)
}

// gapSamples 'event' still sends every gap.
func TestEventGapSamplesSendEveryGap(t *testing.T) {
	t.Parallel()
	srv, _ := streamServer(t, 0, 0, []string{"a", "b", "c", "d"})
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, gapSamples: 'event', gapSampleRate: 1});`, srv.URL))
	for range 3 {
		require.Equal(t, true, vu.chat(`{messages: []}`)["ok"])
	}
	got := vu.drain()
	require.Len(t, got["llm_inter_token_gap"], 9)
	require.Empty(t, got["llm_gaps_unsampled"])
}
