package module

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// A figure the client could not measure is null in the script, never 0, and
// k6 gets no sample of it: a call refused with a 500 had response headers (a
// TTFB) but no first token, so no TTFT, TPOT or E2E.
func TestUnmeasuredFigureIsNullInJS(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"error":"busy"}`, http.StatusInternalServerError)
	}))
	defer srv.Close()

	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, retry: {attempts: 1}});`, srv.URL))
	res := vu.chat(`{messages: []}`)
	require.Equal(t, false, res["ok"])
	for _, key := range []string{"ttft", "ttftAnswer", "tpot", "e2e", "reasoningTime"} {
		v, present := res[key]
		require.True(t, present, "result.%s missing: it must be null, not undefined", key)
		require.Nil(t, v, "result.%s of a call without a first token", key)
	}
	require.IsType(t, float64(0), res["ttfb"], "the headers came: a TTFB was measured")
	// The script itself sees null, not a number.
	require.True(t, vu.run(`res.ttft === null && res.tpot === null && typeof res.ttfb === 'number'`).ToBoolean())

	got := vu.drain()
	require.Len(t, got["llm_requests"], 1)
	require.Len(t, got["llm_ttfb"], 1)
	for _, m := range []string{"llm_ttft", "llm_tpot", "llm_e2e"} {
		require.Empty(t, got[m], "%s got a sample of a figure that was not measured", m)
	}
}
