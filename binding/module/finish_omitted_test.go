package module

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// llmdStream is what llm-d's inference simulator streams: the tokens, a usage
// chunk, [DONE], and no finish reason anywhere.
func llmdStream(completion int) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = fmt.Fprint(w, roleChunk, chunk("a", ""), chunk(" b", ""), chunk(" c", ""), usageChunk(7, completion, 0), "data: [DONE]\n\n")
	}
}

// By default such an answer is complete: at max_tokens its finish is length,
// inferred; below it, unknown. requireFinishReason fails it as truncated.
func TestAnswerWithoutFinishReason(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(llmdStream(3))
	defer srv.Close()

	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q});`, srv.URL))
	res := vu.chat(`{messages: [], max_tokens: 3}`)
	require.Equal(t, true, res["ok"], "%v", res["error"])
	require.Equal(t, "length", res["finishReason"])
	require.Equal(t, "inferred", res["finishSource"])
	res = vu.chat(`{messages: [], max_tokens: 30}`)
	require.Equal(t, true, res["ok"], "%v", res["error"])
	require.Equal(t, "", res["finishReason"])
	require.Equal(t, "none", res["finishSource"])
	got := vu.drain()
	require.Len(t, got["llm_requests"], 2)
	for _, s := range got["llm_failed"] {
		require.Zero(t, s.Value)
	}
	require.Len(t, got["llm_finish_omitted"], 2, "each answer without a finish reason is counted")

	strict := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, requireFinishReason: true});`, srv.URL))
	res = strict.chat(`{messages: [], max_tokens: 3}`)
	require.Equal(t, false, res["ok"])
	errObj := res["error"].(map[string]any) //nolint:forcetypeassert
	require.Equal(t, "truncated", errObj["type"])
	require.Contains(t, errObj["message"], "[DONE] but no finish reason")
}

// An answer whose server named its finish is not counted, and says so.
func TestAnswerWithFinishReasonNotCounted(t *testing.T) {
	t.Parallel()
	srv, _ := streamServer(t, 0, 0, []string{"a", " b"})
	defer srv.Close()

	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q});`, srv.URL))
	res := vu.chat(`{messages: []}`)
	require.Equal(t, true, res["ok"], "%v", res["error"])
	require.Equal(t, "server", res["finishSource"])
	require.Empty(t, vu.drain()["llm_finish_omitted"])
}
