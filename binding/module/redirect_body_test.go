package module

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// A chat call redirected with 307 sends its whole body again to the new
// location (Go's transport takes it anew from the request's GetBody), and
// the answer from there is the call's.
func TestARedirectedCallSendsItsBodyAgain(t *testing.T) {
	t.Parallel()
	srv := recordBodies(t, func(w http.ResponseWriter, r *http.Request, _ map[string]any) {
		if r.URL.Path == "/old/chat/completions" {
			http.Redirect(w, r, "/new/chat/completions", http.StatusTemporaryRedirect)
			return
		}
		answer(w, r)
	})
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, model: 'm'});`, srv.URL+"/old"))
	t.Cleanup(vu.closeIdle)
	vu.run(`(async () => {
		const r = await client.chat({messages: [{role: 'user', content: 'moved'}], max_tokens: 7});
		globalThis.ok = r.ok;
	})()`)
	require.True(t, vu.rt.VU.Runtime().Get("ok").ToBoolean(), "the call is answered from the new location")
	bodies := srv.all()
	require.Len(t, bodies, 2)
	require.Equal(t, bodies[0], bodies[1], "the redirected request carries the same body")
	require.Equal(t, 7.0, bodies[1]["max_tokens"])
	require.Equal(t, "moved", bodies[1]["messages"].([]any)[0].(map[string]any)["content"]) //nolint:forcetypeassert
}
