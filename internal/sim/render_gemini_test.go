package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type geminiResponse struct {
	Candidates []struct {
		Content struct {
			Role  string
			Parts []struct{ Text string }
		}
		FinishReason string
	}
	UsageMetadata struct {
		PromptTokenCount     int
		CandidatesTokenCount int
		TotalTokenCount      int
	}
	ModelVersion string
	Error        *struct {
		Code    int
		Message string
		Status  string
	}
}

func TestGeminiStreamIsCRLFFramedWithCumulativeUsage(t *testing.T) {
	s := newTestSim(t)
	resp := s.post("/v1beta/models/m:streamGenerateContent?alt=sse",
		`{"systemInstruction":{"parts":[{"text":"Be brief."}]},"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"maxOutputTokens":3}}`)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	events := strings.Split(strings.TrimSuffix(string(body), "\r\n\r\n"), "\r\n\r\n")
	require.Len(t, events, 3+1, "one event per engine step, then the finish")
	assert.NotContains(t, strings.ReplaceAll(string(body), "\r\n", ""), "\n", "every line ends with CRLF")
	var text strings.Builder
	for i, ev := range events {
		data, ok := strings.CutPrefix(ev, "data: ")
		require.True(t, ok, ev)
		var r geminiResponse
		require.NoError(t, json.Unmarshal([]byte(data), &r), data)
		require.Len(t, r.Candidates, 1)
		assert.Equal(t, "model", r.Candidates[0].Content.Role)
		text.WriteString(r.Candidates[0].Content.Parts[0].Text)
		assert.Equal(t, countTokens(t, "Be brief.hi"), r.UsageMetadata.PromptTokenCount)
		assert.Equal(t, min(i+1, 3), r.UsageMetadata.CandidatesTokenCount, "cumulative")
		assert.Equal(t, r.UsageMetadata.PromptTokenCount+r.UsageMetadata.CandidatesTokenCount, r.UsageMetadata.TotalTokenCount)
		if i < 3 {
			assert.Empty(t, r.Candidates[0].FinishReason)
		} else {
			assert.Equal(t, "MAX_TOKENS", r.Candidates[0].FinishReason)
			assert.Empty(t, r.Candidates[0].Content.Parts[0].Text)
		}
	}
	assert.Equal(t, 3, countTokens(t, text.String()))
}

func TestGeminiPathErrors(t *testing.T) {
	s := newTestSim(t)
	body := `{"contents":[{"parts":[{"text":"hi"}]}]}`
	for path, status := range map[string]int{
		"/v1beta/models/m:streamGenerateContent":            http.StatusBadRequest, // no alt=sse
		"/v1beta/models/m:countTokens":                      http.StatusNotFound,
		"/v1beta/models/m":                                  http.StatusNotFound,
		"/v1beta/models/nope:streamGenerateContent?alt=sse": http.StatusNotFound,
	} {
		resp := s.post(path, body)
		var r geminiResponse
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&r), path)
		resp.Body.Close()
		assert.Equal(t, status, resp.StatusCode, path)
		require.NotNil(t, r.Error, path)
		assert.Equal(t, status, r.Error.Code, path)
		assert.Equal(t, geminiStatus(status), r.Error.Status, path)
	}
	resp := s.post("/v1beta/models/m:streamGenerateContent?alt=sse", `{"contents":[]}`)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "contents are required")
}

func TestGeminiGenerateContentIsOneAnswer(t *testing.T) {
	s := newTestSim(t)
	resp := s.post("/v1beta/models/m:generateContent", `{"contents":[{"parts":[{"text":"hi"}]}],"generation_config":{"max_output_tokens":4}}`)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var r geminiResponse
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&r))
	require.Len(t, r.Candidates, 1)
	assert.Equal(t, 4, countTokens(t, r.Candidates[0].Content.Parts[0].Text), "snake_case config is read too")
	assert.Equal(t, "MAX_TOKENS", r.Candidates[0].FinishReason)
	assert.Equal(t, 4, r.UsageMetadata.CandidatesTokenCount)
	assert.Equal(t, "m", r.ModelVersion)
}
