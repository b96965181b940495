package sim

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResponsesStreamHasTheEventSequence(t *testing.T) {
	s := newTestSim(t)
	resp := s.post("/v1/responses", `{"model":"m","stream":true,"max_output_tokens":2,"instructions":"Be brief.","input":"Hello there"}`)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	evs := readNamedSSE(t, resp.Body)
	assert.Equal(t, []string{
		"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
		"response.output_text.delta", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done", "response.incomplete",
	}, eventNames(evs))
	var text string
	for i, e := range evs {
		assert.Equal(t, e.name, e.data["type"], "event: equals data.type")
		assert.EqualValues(t, i, e.data["sequence_number"], "sequence numbers count up from 0")
		if e.name == "response.output_text.delta" {
			text += e.data["delta"].(string)
		}
	}
	assert.Equal(t, text, evs[6].data["text"], "output_text.done repeats the whole text")
	final := evs[len(evs)-1].data["response"].(map[string]any)
	assert.Equal(t, "incomplete", final["status"])
	assert.Equal(t, "max_output_tokens", final["incomplete_details"].(map[string]any)["reason"])
	usage := final["usage"].(map[string]any)
	assert.EqualValues(t, countTokens(t, "Be brief.Hello there"), usage["input_tokens"], "instructions and input are the prompt")
	assert.EqualValues(t, 2, usage["output_tokens"])
	assert.EqualValues(t, usage["input_tokens"].(float64)+2, usage["total_tokens"])
	assert.Contains(t, usage, "input_tokens_details")
}

func TestResponsesMidStreamFailure(t *testing.T) {
	s := newTestSim(t)
	resp := s.post("/v1/responses", `{"stream":true,"max_output_tokens":5,"input":"hi"}`, FaultHeader, "error@1")
	evs := readNamedSSE(t, resp.Body)
	resp.Body.Close()
	names := eventNames(evs)
	require.GreaterOrEqual(t, len(names), 2)
	assert.Equal(t, []string{"error", "response.failed"}, names[len(names)-2:])
	failed := evs[len(evs)-1].data["response"].(map[string]any)
	assert.Equal(t, "failed", failed["status"])
	assert.Equal(t, "server_error", failed["error"].(map[string]any)["code"])
}

func TestResponsesNonStreamed(t *testing.T) {
	s := newTestSim(t)
	resp := s.post("/v1/responses", `{"max_output_tokens":3,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}]}`)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var r struct {
		Object string
		Status string
		Output []struct {
			Content []struct{ Type, Text string }
		}
		Usage struct {
			InputTokens  int `json:"input_tokens"`
			OutputTokens int `json:"output_tokens"`
		}
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&r))
	assert.Equal(t, "response", r.Object)
	assert.Equal(t, "incomplete", r.Status)
	require.Len(t, r.Output, 1)
	assert.Equal(t, 3, countTokens(t, r.Output[0].Content[0].Text))
	assert.Equal(t, countTokens(t, "hi"), r.Usage.InputTokens)
	assert.Equal(t, 3, r.Usage.OutputTokens)
}

func TestResponsesRequiresInput(t *testing.T) {
	s := newTestSim(t)
	resp := s.post("/v1/responses", `{"model":"m"}`)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
}
