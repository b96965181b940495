package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// responseID reads a streamed Responses answer's id from response.completed.
func responseID(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	evs, err := readSSE(resp.Body)
	require.NoError(t, err)
	for _, ev := range evs {
		var e struct {
			Type     string `json:"type"`
			Response struct {
				ID string `json:"id"`
			} `json:"response"`
		}
		require.NoError(t, json.Unmarshal([]byte(ev.data), &e))
		if e.Type == "response.completed" || e.Type == "response.incomplete" {
			return e.Response.ID
		}
	}
	t.Fatal("no response.completed")
	return ""
}

// A chained turn is answered on its whole conversation: its prompt is the
// previous turn's input and answer plus its own input, as long as the same
// conversation sent whole; an id never given is a 400 previous_response_not_found.
func TestResponsesPreviousResponseID(t *testing.T) {
	s := newTestSim(t)
	const first = `{"model":"m","stream":true,"max_output_tokens":8,"input":"tell me a long story about the sea"}`
	id := responseID(t, s.post("/v1/responses", first))
	require.True(t, strings.HasPrefix(id, "resp_"), id)

	chained := fmt.Sprintf(`{"model":"m","stream":true,"max_output_tokens":8,"previous_response_id":%q,"input":[{"role":"user","content":"and then?"}]}`, id)
	id2 := responseID(t, s.post("/v1/responses", chained))
	alone := `{"model":"m","stream":true,"max_output_tokens":8,"input":[{"role":"user","content":"and then?"}]}`
	responseID(t, s.post("/v1/responses", alone))
	// The same conversation sent whole, with the first answer's text.
	recs := s.trace.recordsN(t, 3)
	require.Greater(t, recs[1].PromptTokens, recs[0].PromptTokens+recs[2].PromptTokens-1,
		"the chained turn's prompt holds the first turn's input and answer")

	// A chain goes on from the chained answer too.
	third := fmt.Sprintf(`{"model":"m","stream":true,"previous_response_id":%q,"input":"more"}`, id2)
	responseID(t, s.post("/v1/responses", third))
	require.Greater(t, s.trace.recordsN(t, 4)[3].PromptTokens, recs[1].PromptTokens)

	resp := s.post("/v1/responses", `{"model":"m","stream":true,"previous_response_id":"resp_nope","input":"x"}`)
	defer resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	b, _ := io.ReadAll(resp.Body)
	require.Contains(t, string(b), `"code":"previous_response_not_found"`)
	require.Contains(t, string(b), "resp_nope")
}

// The store forgets the oldest answers past its bound.
func TestResponseStoreBounded(t *testing.T) {
	var st responseStore
	for i := range storedResponses + 1 {
		st.keep(fmt.Sprintf("resp_%d", i), nil, []any{map[string]string{"role": "assistant", "content": "x"}})
	}
	require.Len(t, st.items, storedResponses)
	_, _, e := st.expand([]byte(`{"previous_response_id":"resp_0","input":"q"}`))
	require.NotNil(t, e)
	body, items, e := st.expand([]byte(fmt.Sprintf(`{"previous_response_id":"resp_%d","input":"q"}`, storedResponses)))
	require.Nil(t, e)
	require.Len(t, items, 2)
	require.NotContains(t, string(body), "previous_response_id")
}
