package e2e

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServerEnergyAgainstLLMSim: the engine and the DCGM exporter of llm-sim
// as two serverMetrics sources; the record's J per output token is within
// 5 % of llm-sim's power model applied to its own trace (2 GPUs × 60 W idle
// over the window, plus 240 W while each request held a running slot).
func TestServerEnergyAgainstLLMSim(t *testing.T) {
	t.Parallel()
	run := runTraced(t, "server_energy.js")
	require.Equal(t, 0, run.code, run.out)
	assert.Contains(t, run.out, "✓ llm_server_energy_per_output_token")
	assert.Contains(t, run.out, "GPU energy (run)")

	var rec struct {
		Server []struct {
			Source string `json:"source"`
			Models []struct {
				ID          string `json:"id"`
				MaxModelLen *int64 `json:"max_model_len"`
			} `json:"models"`
			Engine   string   `json:"engine"`
			Warnings []string `json:"warnings"`
			Run      struct {
				From   time.Time `json:"from"`
				To     time.Time `json:"to"`
				Energy *struct {
					Joules          *float64 `json:"joules"`
					OutputTokens    *float64 `json:"output_tokens"`
					JPerOutputToken *float64 `json:"j_per_output_token"`
					Sources         []string `json:"sources"`
					GPUs            int      `json:"gpus"`
				} `json:"energy"`
			} `json:"run"`
		} `json:"server"`
	}
	require.NoError(t, json.Unmarshal(run.report, &rec))
	require.Len(t, rec.Server, 2)
	engine := rec.Server[0]
	require.Len(t, engine.Models, 1, "llm-sim's /v1/models, read beside its metrics")
	assert.Equal(t, "sim", engine.Models[0].ID)
	require.NotNil(t, engine.Models[0].MaxModelLen)
	assert.Equal(t, int64(8192), *engine.Models[0].MaxModelLen, "the context window llm-sim was given")
	assert.Contains(t, run.out, "served models: sim (context 8192 tokens)")
	dcgm := rec.Server[1]
	require.Equal(t, "dcgm", dcgm.Source)
	assert.Equal(t, "dcgm", dcgm.Engine)
	assert.Empty(t, dcgm.Warnings)
	e := dcgm.Run.Energy
	require.NotNil(t, e)
	require.NotNil(t, e.JPerOutputToken, "attributed to the engine's output tokens")
	assert.Equal(t, 2, e.GPUs)
	assert.Equal(t, []string{"counter"}, e.Sources)

	// llm-sim's power model on its own trace: a request holds its slot from
	// admission to its last token.
	busy := 0.0
	eachTraced(t, run.trace, func(r struct {
		Op         string  `json:"op"`
		AdmittedNS int64   `json:"admitted_ns"`
		EmitNS     []int64 `json:"emit_ns"`
	}) {
		if r.Op == "" && r.AdmittedNS != 0 && len(r.EmitNS) > 0 {
			busy += float64(r.EmitNS[len(r.EmitNS)-1]-r.AdmittedNS) / 1e9
		}
	})
	require.Positive(t, busy)
	window := dcgm.Run.To.Sub(dcgm.Run.From).Seconds()
	wantJ := 2*60*window + 240*busy
	want := wantJ / *e.OutputTokens
	t.Logf("J per output token: record %.4f, power model on the trace %.4f (%.0f J over %.2f s, %.0f output tokens)",
		*e.JPerOutputToken, want, *e.Joules, window, *e.OutputTokens)
	assert.InEpsilon(t, want, *e.JPerOutputToken, 0.05, "J per output token: record %.4f, power model %.4f", *e.JPerOutputToken, want)
}
