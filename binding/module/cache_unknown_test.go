package module

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// A usage report without any cached-token field (vLLM without
// --enable-prompt-tokens-details) says nothing about the cache: cache is
// unknown and usage.cachedTokens null, and llm_cache_hit gets no sample.
func TestUsageWithoutCachedField(t *testing.T) {
	t.Parallel()
	noField := "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[]," +
		"\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":2,\"total_tokens\":9}}\n\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = fmt.Fprint(w, roleChunk, chunk("a", ""), chunk(" b", "stop"), noField, "data: [DONE]\n\n")
	}))
	defer srv.Close()

	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q});`, srv.URL))
	res := vu.chat(`{messages: []}`)
	require.Equal(t, true, res["ok"], "%v", res["error"])
	require.Equal(t, "unknown", res["cache"])
	usage := res["usage"].(map[string]any) //nolint:forcetypeassert
	require.Nil(t, usage["cachedTokens"])
	require.EqualValues(t, 7, usage["promptTokens"])
	require.Empty(t, vu.drain()["llm_cache_hit"])
}
