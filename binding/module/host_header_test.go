package module

import (
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"
)

// A Host header names the virtual host the request is for, as in k6/http
// (a gateway's ingress reached by its address): Go sends only the
// request's Host field, so the header set on a client or a call would
// otherwise be dropped without a word. Embeddings calls, which take their
// own way to the VU's transport, honour it too, and the VU's cookie jar.
func TestHostHeaderAndCookiesReachTheServer(t *testing.T) {
	var (
		mu    sync.Mutex
		hosts []string
		jars  []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hosts, jars = append(hosts, r.Host), append(jars, r.Header.Get("Cookie"))
		mu.Unlock()
		if r.URL.Path == "/v1/embeddings" {
			http.SetCookie(w, &http.Cookie{Name: "route", Value: "r1", Path: "/"})
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprint(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5,0.25]}],"model":"m","usage":{"prompt_tokens":2,"total_tokens":2}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = fmt.Fprint(w, roleChunk, chunk("hi", ""), chunk("", "stop"), usageChunk(3, 1, 0), "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	seen := func() ([]string, []string) {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), hosts...), append([]string(nil), jars...)
	}

	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({ baseURL: %q, model: 'm', headers: { Host: 'llm.internal' } });`,
		srv.URL+"/v1"))
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	vu.state().CookieJar = jar
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)

	require.Equal(t, true, vu.call("embed", `{ input: 'a chunk' }`)["ok"])
	require.Equal(t, true, vu.chat(`{ messages: [{ role: 'user', content: 'hi' }] }, { headers: { Host: 'other.internal' } }`)["ok"])
	require.Equal(t, true, vu.call("embed", `{ input: 'a chunk' }`)["ok"])
	h, c := seen()
	require.Equal(t, []string{"llm.internal", "other.internal", "llm.internal"}, h)
	require.Equal(t, []string{"", "route=r1", "route=r1"}, c) // the embed answer's cookie, kept in the VU's jar
	require.Len(t, jar.Cookies(u), 1)
}

// k6's rps option holds for every call's request as for k6/http's: chat's
// through k6's request path, embed's and rerank's through their own.
func TestTheRPSLimitTakesATokenPerRequest(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/embeddings" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprint(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5]}],"model":"m"}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = fmt.Fprint(w, roleChunk, chunk("hi", ""), chunk("", "stop"), "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({ baseURL: %q, model: 'm' });`, srv.URL+"/v1"))
	lim := rate.NewLimiter(rate.Every(time.Hour), 3) // three requests now, none refilled in the test
	vu.state().RPSLimit = lim
	require.Equal(t, true, vu.call("embed", `{ input: 'a' }`)["ok"])
	require.Equal(t, true, vu.chat(`{ messages: [{ role: 'user', content: 'hi' }] }`)["ok"])
	require.InDelta(t, 1, lim.Tokens(), 0.01)
}
