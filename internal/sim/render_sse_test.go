package sim

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRawEventsOpenWithGETOneTokenPerEvent(t *testing.T) {
	m := fastModel("m")
	m.TokensPerStep = 3
	s := newTestSim(t, m)
	resp, body := s.get("/v1/sim/events?max_tokens=5&prompt=hello")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	blocks := strings.Split(strings.TrimSuffix(string(body), "\n\n"), "\n\n")
	require.Len(t, blocks, 5)
	var text strings.Builder
	for i, b := range blocks {
		id, data, ok := strings.Cut(b, "\n")
		require.True(t, ok, b)
		assert.Equal(t, "id: "+strconv.Itoa(i+1), id)
		word, ok := strings.CutPrefix(data, "data:  ")
		require.True(t, ok, "the token keeps its leading space: %q", data)
		assert.Equal(t, 1, countTokens(t, " "+word))
		text.WriteString(" " + word)
	}
	rec := s.trace.recordsN(t, 1)
	assert.Equal(t, countTokens(t, "hello"), rec[0].PromptTokens, "the query's prompt")
	assert.Equal(t, 5, rec[0].CompletionTokens)
}

func TestRawEventsRejectsOtherMethodsAndBadQueries(t *testing.T) {
	s := newTestSim(t)
	req, err := http.NewRequest(http.MethodPut, s.ts.URL+"/v1/sim/events", nil)
	require.NoError(t, err)
	resp, err := s.client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	assert.Equal(t, "GET, POST", resp.Header.Get("Allow"))

	resp, _ = s.get("/v1/sim/events?max_tokens=lots")
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	resp, _ = s.get("/v1/sim/events?max_tokens=0")
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)

	// Other routes still answer GET with 405.
	resp, _ = s.get("/v1/messages")
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	assert.Equal(t, http.MethodPost, resp.Header.Get("Allow"))
}
