package module

import (
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Calls use the VU's cookie jar as k6/http's requests do: what the jar
// holds for the URL goes out, and what an answer sets is kept for the next
// call (a gateway's sticky-session cookie). A call's own Cookie header
// goes out beside them, and a VU without a jar sends none.
func TestCallsUseTheVUsCookieJar(t *testing.T) {
	var (
		mu   sync.Mutex
		sent []string // each request's Cookie header
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sent = append(sent, r.Header.Get("Cookie"))
		first := len(sent) == 1
		mu.Unlock()
		if first {
			http.SetCookie(w, &http.Cookie{Name: "route", Value: "replica-2", Path: "/"})
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = fmt.Fprint(w, roleChunk, chunk("hi", ""), chunk("", "stop"), usageChunk(3, 1, 0), "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	sentCookies := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), sent...)
	}

	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({ baseURL: %q, model: 'm' });`, srv.URL+"/v1"))
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	jar.SetCookies(u, []*http.Cookie{{Name: "session", Value: "s1"}}) // as http.cookieJar().set does
	vu.state().CookieJar = jar

	body := `{ messages: [{ role: 'user', content: 'hi' }] }`
	require.Equal(t, true, vu.chat(body)["ok"])
	require.Equal(t, true, vu.chat(body + `, { headers: { Cookie: 'mine=1' } }`)["ok"])
	got := sentCookies()
	require.Equal(t, "session=s1", got[0])
	require.Equal(t, "mine=1; session=s1; route=replica-2", got[1]) // the answer's cookie kept, the older first
	require.Len(t, jar.Cookies(u), 2)

	vu.state().CookieJar = nil // no jar: nothing sent, nothing kept
	require.Equal(t, true, vu.chat(body)["ok"])
	require.Empty(t, sentCookies()[2])
}
