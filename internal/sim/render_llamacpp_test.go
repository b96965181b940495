package sim

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/tokenizer"
)

type llamaCppEvent struct {
	Content         string
	Tokens          []int
	Stop            bool
	TokensPredicted int    `json:"tokens_predicted"`
	TokensEvaluated int    `json:"tokens_evaluated"`
	StopType        string `json:"stop_type"`
	Timings         *struct {
		CacheN      int     `json:"cache_n"`
		PromptN     int     `json:"prompt_n"`
		PromptMs    float64 `json:"prompt_ms"`
		PredictedN  int     `json:"predicted_n"`
		PredictedMs float64 `json:"predicted_ms"`
	}
}

func TestLlamaCppStreamHasRunningCountsAndEngineTimings(t *testing.T) {
	m := slowModel()
	m.TokensPerStep = 2
	s := newTestSim(t, m)
	resp := s.post("/completion", `{"stream":true,"n_predict":5,"prompt":"Why is the sky blue?"}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	evs, err := readSSE(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Len(t, evs, 3+1, "steps of 2, 2 and 1 tokens, then the final event")
	tk, err := tokenizer.Get("")
	require.NoError(t, err)
	var text strings.Builder
	predicted := 0
	for _, raw := range evs[:3] {
		var ev llamaCppEvent
		require.NoError(t, json.Unmarshal([]byte(raw.data), &ev), raw.data)
		assert.False(t, ev.Stop)
		ids := tk.Encode(ev.Content)
		require.Len(t, ev.Tokens, len(ids))
		for i := range ids {
			assert.EqualValues(t, ids[i], ev.Tokens[i], "token ids of the content")
		}
		predicted += len(ids)
		assert.Equal(t, predicted, ev.TokensPredicted, "a running count")
		text.WriteString(ev.Content)
	}
	assert.Equal(t, 5, countTokens(t, text.String()))
	var final llamaCppEvent
	require.NoError(t, json.Unmarshal([]byte(evs[3].data), &final))
	assert.True(t, final.Stop)
	assert.Empty(t, final.Content)
	assert.Equal(t, "limit", final.StopType)
	assert.Equal(t, 5, final.TokensPredicted)
	require.NotNil(t, final.Timings)
	rec := s.trace.recordsN(t, 1)
	assert.Equal(t, rec[0].PromptTokens, final.TokensEvaluated)
	assert.Equal(t, rec[0].PromptTokens, final.Timings.PromptN+final.Timings.CacheN)
	assert.Equal(t, 5, final.Timings.PredictedN)
	assert.InDelta(t, float64(rec[0].PrefillEndNS-rec[0].PrefillStartNS)/1e6, final.Timings.PromptMs, 1e-6, "prefill as the engine ran it")
	assert.GreaterOrEqual(t, final.Timings.PromptMs, 20.0, "prefill_base_ms")
	assert.GreaterOrEqual(t, final.Timings.PredictedMs, float64(2*5*time.Millisecond)/1e6, "two decode steps after the prefill's")
}

func TestLlamaCppNonStreamedAndErrors(t *testing.T) {
	s := newTestSim(t)
	resp := s.post("/completion", `{"n_predict":3,"prompt":"hi"}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var r llamaCppEvent
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&r))
	resp.Body.Close()
	assert.True(t, r.Stop)
	assert.Equal(t, 3, countTokens(t, r.Content))

	resp = s.post("/completion", `{"n_predict":3}`)
	var e struct{ Error struct{ Code int } }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Equal(t, http.StatusBadRequest, e.Error.Code)
}
