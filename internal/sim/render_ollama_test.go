package sim

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readNDJSON reads every line of an NDJSON body as an object.
func readNDJSON(t *testing.T, resp *http.Response) []map[string]any {
	t.Helper()
	defer resp.Body.Close()
	var out []map[string]any
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var v map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &v), sc.Text())
		out = append(out, v)
	}
	require.NoError(t, sc.Err())
	return out
}

// slowModel has phases long enough to show in durations.
func slowModel() ModelConfig {
	m := fastModel("m")
	m.PrefillBaseMs, m.DecodeBaseMs = 20, 5
	return m
}

func TestOllamaChatStreamsNDJSONWithDurationsFromTheEngine(t *testing.T) {
	s := newTestSim(t, slowModel())
	// No "stream" member: Ollama streams by default.
	resp := s.post("/api/chat", `{"model":"m","options":{"num_predict":4},"messages":[{"role":"user","content":"Why is the sky blue?"}]}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "application/x-ndjson", resp.Header.Get("Content-Type"))
	lines := readNDJSON(t, resp)
	require.Len(t, lines, 4+1, "one line per engine step, then the done line")
	var text strings.Builder
	for _, l := range lines[:4] {
		assert.Equal(t, false, l["done"])
		assert.Equal(t, "m", l["model"])
		_, err := time.Parse(time.RFC3339Nano, l["created_at"].(string))
		require.NoError(t, err)
		text.WriteString(l["message"].(map[string]any)["content"].(string))
	}
	assert.Equal(t, 4, countTokens(t, text.String()))
	last := lines[4]
	assert.Equal(t, true, last["done"])
	assert.Equal(t, "length", last["done_reason"])
	assert.EqualValues(t, 4, last["eval_count"])
	assert.EqualValues(t, countTokens(t, "Why is the sky blue?"), last["prompt_eval_count"])

	rec := s.trace.recordsN(t, 1)
	ns := func(k string) int64 { return int64(last[k].(float64)) }
	assert.Equal(t, rec[0].PrefillEndNS-rec[0].PrefillStartNS, ns("prompt_eval_duration"), "prefill as the engine ran it")
	assert.GreaterOrEqual(t, ns("prompt_eval_duration"), int64(20*time.Millisecond), "prefill_base_ms")
	assert.GreaterOrEqual(t, ns("eval_duration"), int64(3*5*time.Millisecond), "three decode steps after the prefill's token")
	assert.GreaterOrEqual(t, ns("total_duration"), ns("load_duration")+ns("prompt_eval_duration")+ns("eval_duration"))
}

func TestOllamaGenerateUsesResponse(t *testing.T) {
	s := newTestSim(t)
	lines := readNDJSON(t, s.post("/api/generate", `{"model":"m","system":"Be brief.","prompt":"hi","options":{"num_predict":2}}`))
	require.Len(t, lines, 3)
	for _, l := range lines {
		assert.NotContains(t, l, "message")
		assert.Contains(t, l, "response")
	}
	assert.EqualValues(t, countTokens(t, "Be brief.hi"), lines[2]["prompt_eval_count"])
}

func TestOllamaNonStreamedAndErrors(t *testing.T) {
	s := newTestSim(t)
	resp := s.post("/api/chat", `{"stream":false,"options":{"num_predict":3},"messages":[{"role":"user","content":"hi"}]}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	lines := readNDJSON(t, resp)
	require.Len(t, lines, 1)
	assert.Equal(t, true, lines[0]["done"])
	assert.Equal(t, 3, countTokens(t, lines[0]["message"].(map[string]any)["content"].(string)))
	assert.EqualValues(t, 3, lines[0]["eval_count"])

	resp = s.post("/api/chat", `{"model":"nope","messages":[{"role":"user","content":"hi"}]}`)
	lines = readNDJSON(t, resp)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.Len(t, lines, 1)
	assert.Contains(t, lines[0]["error"], "nope")

	resp = s.post("/api/generate", `{"model":"m"}`)
	lines = readNDJSON(t, resp)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Equal(t, map[string]any{"error": "prompt is required"}, lines[0])

	lines = readNDJSON(t, s.post("/api/chat", `{"options":{"num_predict":5},"messages":[{"role":"user","content":"hi"}]}`, FaultHeader, "error@2"))
	assert.Equal(t, map[string]any{"error": "llm-sim fault: error after 2 tokens"}, lines[len(lines)-1], "a line of its own")
}

func TestOllamaNumPredictMinusOneIsTheDefault(t *testing.T) {
	s := newTestSim(t)
	lines := readNDJSON(t, s.post("/api/chat", `{"options":{"num_predict":-1},"messages":[{"role":"user","content":"hi"}]}`))
	assert.EqualValues(t, fastModel("m").DefaultMaxTokens, lines[len(lines)-1]["eval_count"])
	resp := s.post("/api/chat", `{"options":{"num_predict":0},"messages":[{"role":"user","content":"hi"}]}`)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
}
