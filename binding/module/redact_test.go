package module

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// echoingServer answers 401 as a provider does, quoting the credential it
// got without its scheme, whole and cut short, and in a response header.
func echoingServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := r.URL.Query().Get("key")
		for _, h := range []string{"Authorization", "X-Api-Key", "Api-Key", "X-Goog-Api-Key", "Proxy-Authorization"} {
			if v := r.Header.Get(h); v != "" {
				tok = v[strings.LastIndexByte(v, ' ')+1:]
			}
		}
		w.Header().Set("X-Echo", tok)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		cut := ""
		if len(tok) > 12 {
			cut = tok[:8] + "****" + tok[len(tok)-4:]
		}
		fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s (%s)","code":"invalid_api_key"}}`, tok, cut)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A credential set any way the client takes one comes back redacted in the
// result's error, of chat and embed alike, and in the debug dump.
func TestEchoedCredentialsAreRedacted(t *testing.T) {
	t.Parallel()
	srv := echoingServer(t)
	const tok = "sk-proj-moduleTest0123456789abcdefXYZ"
	for _, tc := range []struct{ how, client, params string }{
		{"client Authorization", `headers: {Authorization: 'Bearer ` + tok + `'}`, `{}`},
		{"call authorization", ``, `{headers: {authorization: 'Bearer ` + tok + `'}}`},
		{"client X-API-KEY", `headers: {'X-API-KEY': '` + tok + `'}`, `{}`},
		{"call api-key", ``, `{headers: {'api-key': '` + tok + `'}}`},
		{"call x-goog-api-key", ``, `{headers: {'x-goog-api-key': '` + tok + `'}}`},
		{"call Proxy-Authorization", ``, `{headers: {'Proxy-Authorization': 'Bearer ` + tok + `'}}`},
		{"baseURL key", `baseURL: '` + srv.URL + `?key=` + tok + `'`, `{}`},
		{"call path key", ``, `{path: '/chat/completions?key=` + tok + `'}`},
		{"apiKey", `apiKey: '` + tok + `'`, `{}`},
	} {
		opts := fmt.Sprintf("baseURL: %q", srv.URL)
		if tc.client != "" {
			opts = tc.client
			if !strings.HasPrefix(tc.client, "baseURL") {
				opts = fmt.Sprintf("baseURL: %q, %s", srv.URL, tc.client)
			}
		}
		vu := newTestVU(t, `const client = new llm.Client({`+opts+`, model: 'm'});`)
		vu.state().Options.HTTPDebug.String = "full"
		vu.state().Options.HTTPDebug.Valid = true
		for _, method := range []string{"chat", "embed"} {
			body := `{messages: [{role: 'user', content: 'hi'}]}`
			if method == "embed" {
				body = `{input: 'hi'}`
			}
			res := vu.call(method, body+", "+tc.params)
			e, _ := res["error"].(map[string]any)
			require.NotNil(t, e, "%s %s: %v", tc.how, method, res)
			msg, _ := e["message"].(string)
			require.Contains(t, msg, "Incorrect API key provided: [REDACTED] ([REDACTED])", "%s %s", tc.how, method)
			require.NotContains(t, fmt.Sprint(res), tok, "%s %s", tc.how, method)
			require.NotContains(t, fmt.Sprint(res), "moduleTest", "%s %s", tc.how, method)
		}
		logs := vu.logs.String()
		require.Contains(t, logs, "X-Echo", tc.how)
		require.NotContains(t, logs, tok, tc.how)
		vu.closeIdle()
	}
}

// A network error names the URL it failed on: never with its key.
func TestNetworkErrorLosesTheURLKey(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	dead := srv.URL
	srv.Close()
	const key = "AIzaSy-moduleNetworkKey0123456789"
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, model: 'm'});`, dead+"/v1?key="+key))
	res := vu.chat(`{messages: [{role: 'user', content: 'hi'}]}`)
	e, _ := res["error"].(map[string]any)
	require.NotNil(t, e, res)
	require.Equal(t, "network", e["type"])
	require.Contains(t, e["message"], "key=REDACTED")
	require.NotContains(t, fmt.Sprint(res), key)
	require.Equal(t, dead+"/v1", res["servedBy"], "the client's label has no query")
}

// An Azure-style base URL keeps its query on every request, after the
// joined path; the client's label is the base URL without it.
func TestBaseURLQueryStaysOnTheRequest(t *testing.T) {
	t.Parallel()
	srv, seen := streamServer(t, 0, 0, []string{"a"})
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, model: 'm'});`,
		srv.URL+"/openai/deployments/gpt-4o?api-version=2024-02-01"))
	res := vu.chat(`{messages: [{role: 'user', content: 'hi'}]}`)
	require.Equal(t, true, res["ok"], res)
	req := seen()
	require.Equal(t, "/openai/deployments/gpt-4o/chat/completions", req.URL.Path)
	require.Equal(t, "api-version=2024-02-01", req.URL.RawQuery)
	require.Equal(t, srv.URL+"/openai/deployments/gpt-4o", res["servedBy"])
	vu.closeIdle()
}
