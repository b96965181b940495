package llmstream

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// signedServer answers every request with a recorded stream (a protocol
// fixture, in the provider's documented format) and keeps the request bodies.
func signedServer(t *testing.T, fixture string) (string, func() []map[string]any) {
	t.Helper()
	answer, err := os.ReadFile(fixture)
	require.NoError(t, err)
	var mu sync.Mutex
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var b map[string]any
		_ = json.Unmarshal(raw, &b)
		mu.Lock()
		bodies = append(bodies, b)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(answer)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []map[string]any {
		mu.Lock()
		defer mu.Unlock()
		return append([]map[string]any(nil), bodies...)
	}
}

// With reasoning 'send', turn 2 carries turn 1's signed reasoning exactly as
// it streamed: Anthropic's thinking block with its signature and the
// redacted block's data before the text; Gemini's thought part with its
// thoughtSignature. With 'drop', none of it.
func TestConversationSendsSignedReasoningBack(t *testing.T) {
	for _, c := range []struct {
		proto, fixture, send, drop string
	}{
		{"anthropic", "testdata/protocols/anthropic/thinking.txt",
			`[{"content":"one","role":"user"},{"content":[{"signature":"EqQBCgIYAh...","thinking":"Let me work this out.","type":"thinking"},` +
				`{"data":"EmwKAhgBEgy3va3pzix/LafPsn4a","type":"redacted_thinking"},{"text":"It is 7.","type":"text"}],"role":"assistant"},` +
				`{"content":"two","role":"user"}]`,
			`[{"content":"one","role":"user"},{"content":[{"text":"It is 7.","type":"text"}],"role":"assistant"},{"content":"two","role":"user"}]`},
		{"gemini", "testdata/protocols/gemini/thoughts.txt",
			`[{"parts":[{"text":"one"}],"role":"user"},{"parts":[{"text":"Considering the options.","thought":true,"thoughtSignature":"c2ln"},` +
				`{"text":"Answer done."}],"role":"model"},{"parts":[{"text":"two"}],"role":"user"}]`,
			`[{"parts":[{"text":"one"}],"role":"user"},{"parts":[{"text":"Answer done."}],"role":"model"},{"parts":[{"text":"two"}],"role":"user"}]`},
	} {
		t.Run(c.proto, func(t *testing.T) {
			for policy, want := range map[string]string{"send": c.send, "drop": c.drop} {
				base, bodies := signedServer(t, c.fixture)
				vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, model: 'm', protocol: %q});`, base, c.proto))
				vu.run(fmt.Sprintf(`(async () => {
					const conv = client.conversation({reasoning: %q, body: {max_tokens: 50}});
					await conv.say('one');
					await conv.say('two');
					conv.end();
				})()`, policy))
				got := bodies()
				require.Len(t, got, 2)
				field := "messages"
				if c.proto == "gemini" {
					field = "contents"
				}
				hist, err := json.Marshal(got[1][field])
				require.NoError(t, err)
				require.JSONEq(t, want, string(hist), policy)
				vu.closeIdle()
			}
		})
	}
}
