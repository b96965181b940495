package e2e

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSpecDecodeAgainstLLMSim: llm-sim accepts draft positions 0, 1, 2 in
// 80 %, 60 % and 40 % of its drafts; the record's acceptance rate (60 %),
// mean acceptance length (1 + 1.8 tokens a step) and acceptance by position
// are those shares, to within what its whole-token counters round (one
// token per position over the drafts), and the k6 threshold on
// llm_server_spec_acceptance holds.
func TestSpecDecodeAgainstLLMSim(t *testing.T) {
	t.Parallel()
	run := runTraced(t, "spec_decode.js")
	require.Equal(t, 0, run.code, run.out)
	assert.Contains(t, run.out, "✓ llm_server_spec_acceptance")
	assert.Contains(t, run.out, "acceptance rate")

	var rec struct {
		Server []struct {
			Run struct {
				SpecDecode *struct {
					Drafts               float64   `json:"drafts"`
					DraftTokens          float64   `json:"draft_tokens"`
					AcceptanceRate       *float64  `json:"acceptance_rate"`
					MeanAcceptanceLength *float64  `json:"mean_acceptance_length"`
					ByPosition           []float64 `json:"acceptance_by_position"`
				} `json:"spec_decode"`
			} `json:"run"`
		} `json:"server"`
	}
	require.NoError(t, json.Unmarshal(run.report, &rec))
	require.Len(t, rec.Server, 1)
	sd := rec.Server[0].Run.SpecDecode
	require.NotNil(t, sd, "the run's speculative decoding")
	require.Greater(t, sd.Drafts, 100.0, "enough drafts to tell the shares")
	assert.InDelta(t, 3*sd.Drafts, sd.DraftTokens, 0, "3 draft tokens a draft")
	tol := 1 / sd.Drafts
	require.NotNil(t, sd.AcceptanceRate)
	require.NotNil(t, sd.MeanAcceptanceLength)
	t.Logf("%.0f drafts: acceptance rate %.4f, mean acceptance length %.4f, by position %v",
		sd.Drafts, *sd.AcceptanceRate, *sd.MeanAcceptanceLength, sd.ByPosition)
	assert.InDelta(t, 0.6, *sd.AcceptanceRate, tol)
	assert.InDelta(t, 2.8, *sd.MeanAcceptanceLength, 3*tol)
	require.Len(t, sd.ByPosition, 3)
	for i, want := range []float64{0.8, 0.6, 0.4} {
		assert.InDelta(t, want, sd.ByPosition[i], tol, "position %d", i)
	}
}
