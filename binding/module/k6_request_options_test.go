package module

// k6's options for HTTP requests hold for every call's request as for
// k6/http's: userAgent, the VU's cookie jar, a Host header, rps.

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
	"gopkg.in/guregu/null.v3"
)

// The User-Agent a call sends follows k6's userAgent option as k6/http's
// requests do: k6's default when the script sets none (the option then
// holds "Grafana k6/<version>" without being Valid), the script's value,
// none at all for "", and a client's or call's own header over it.
func TestUserAgentIsK6s(t *testing.T) {
	srv, lastRequest := streamServer(t, 0, 0, []string{"hi"})
	for _, tc := range []struct {
		name   string
		option null.String
		params string
		want   []string // the request's User-Agent values
	}{
		{"k6's default", null.NewString("Grafana k6/1.8.1", false), `{}`, []string{"Grafana k6/1.8.1"}},
		{"the script's", null.StringFrom("my-test/2"), `{}`, []string{"my-test/2"}},
		{"none", null.StringFrom(""), `{}`, nil},
		{"the call's header over it", null.NewString("Grafana k6/1.8.1", false),
			`{ headers: { 'User-Agent': 'mine' } }`, []string{"mine"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({ baseURL: %q, model: 'm' });`, srv.URL+"/v1"))
			vu.state().Options.UserAgent = tc.option
			res := vu.chat(`{ messages: [{ role: 'user', content: 'hi' }] }, ` + tc.params)
			require.Equal(t, true, res["ok"], "%v", res["error"])
			require.Equal(t, tc.want, lastRequest().Header.Values("User-Agent"))
		})
	}
}

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
		}
		shortAnswer(w, r)
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
	srv := httptest.NewServer(http.HandlerFunc(shortAnswer))
	t.Cleanup(srv.Close)
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({ baseURL: %q, model: 'm' });`, srv.URL+"/v1"))
	lim := rate.NewLimiter(rate.Every(time.Hour), 3) // three requests now, none refilled in the test
	vu.state().RPSLimit = lim
	require.Equal(t, true, vu.call("embed", `{ input: 'a' }`)["ok"])
	require.Equal(t, true, vu.chat(`{ messages: [{ role: 'user', content: 'hi' }] }`)["ok"])
	require.InDelta(t, 1, lim.Tokens(), 0.01)
}

// shortAnswer answers an embeddings request with one vector and any other
// with a one-token chat stream: the server of tests about the requests.
func shortAnswer(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/v1/embeddings" {
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprint(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5]}],"model":"m"}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = fmt.Fprint(w, roleChunk, chunk("hi", ""), chunk("", "stop"), "data: [DONE]\n\n")
}
