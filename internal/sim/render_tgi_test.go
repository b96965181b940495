package sim

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/tokenizer"
)

type tgiEvent struct {
	Index int
	Token struct {
		ID      int
		Text    string
		Special bool
	}
	GeneratedText *string `json:"generated_text"`
	Details       *struct {
		FinishReason    string `json:"finish_reason"`
		GeneratedTokens int    `json:"generated_tokens"`
		InputLength     int    `json:"input_length"`
	}
}

// readTGI reads axum-style "data:{…}" events (no space after the colon).
func readTGI(t *testing.T, resp *http.Response) []tgiEvent {
	t.Helper()
	defer resp.Body.Close()
	var out []tgiEvent
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data:{")
		require.True(t, ok, "data: with no space, then the object: %q", line)
		var ev tgiEvent
		require.NoError(t, json.Unmarshal([]byte("{"+data), &ev), line)
		out = append(out, ev)
	}
	require.NoError(t, sc.Err())
	return out
}

func TestTGIStreamsOneEventPerTokenEvenWithBundledSteps(t *testing.T) {
	m := fastModel("m")
	m.TokensPerStep = 3
	s := newTestSim(t, m)
	evs := readTGI(t, s.post("/generate_stream", `{"inputs":"Why is the sky blue?","parameters":{"details":true,"max_new_tokens":7}}`))
	require.Len(t, evs, 7)
	tk, err := tokenizer.Get("")
	require.NoError(t, err)
	var text strings.Builder
	for i, ev := range evs {
		assert.Equal(t, i+1, ev.Index)
		assert.False(t, ev.Token.Special)
		enc := tk.Encode(ev.Token.Text)
		require.Len(t, enc, 1)
		assert.EqualValues(t, enc[0], ev.Token.ID, "the token id is the word's o200k id")
		text.WriteString(ev.Token.Text)
		if i < 6 {
			assert.Nil(t, ev.GeneratedText)
			assert.Nil(t, ev.Details)
		}
	}
	last := evs[6]
	require.NotNil(t, last.GeneratedText)
	assert.Equal(t, text.String(), *last.GeneratedText)
	require.NotNil(t, last.Details)
	assert.Equal(t, "length", last.Details.FinishReason)
	assert.Equal(t, 7, last.Details.GeneratedTokens)
	assert.Equal(t, countTokens(t, "Why is the sky blue?"), last.Details.InputLength)
}

func TestTGINaturalStopEndsOnTheEOSToken(t *testing.T) {
	m := fastModel("m")
	m.OutputDist, m.OutputMinTokens, m.OutputMeanTokens = "uniform", 3, 5
	s := newTestSim(t, m)
	evs := readTGI(t, s.post("/generate_stream", `{"inputs":"hi","parameters":{"details":true,"max_new_tokens":500}}`))
	last := evs[len(evs)-1]
	assert.True(t, last.Token.Special)
	assert.Equal(t, "eos_token", last.Details.FinishReason)
	assert.Equal(t, len(evs), last.Details.GeneratedTokens, "the EOS token is generated and counted")
	assert.Equal(t, len(evs)-1, countTokens(t, *last.GeneratedText), "but it is not text")
}

func TestTGIWithoutDetailsAndNonStreamed(t *testing.T) {
	s := newTestSim(t)
	evs := readTGI(t, s.post("/generate_stream", `{"inputs":"hi","parameters":{"max_new_tokens":2}}`))
	require.Len(t, evs, 2)
	assert.NotNil(t, evs[1].GeneratedText)
	assert.Nil(t, evs[1].Details, "details only when asked")

	resp := s.post("/generate", `{"inputs":"hi","parameters":{"details":true,"max_new_tokens":3}}`)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var r tgiEvent
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&r))
	assert.Equal(t, 3, countTokens(t, *r.GeneratedText))
	assert.Equal(t, 3, r.Details.GeneratedTokens)

	resp2 := s.post("/generate_stream", `{"parameters":{}}`)
	defer resp2.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp2.StatusCode)
	var e map[string]string
	require.NoError(t, json.NewDecoder(resp2.Body).Decode(&e))
	assert.Equal(t, map[string]string{"error": "missing field `inputs`", "error_type": "validation"}, e)
}
