package module

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/report"
)

// traceparentRE is a version-00 traceparent as the W3C spec writes it:
// lowercase hex, the sampled flag 00 or 01.
var traceparentRE = regexp.MustCompile(`^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$`)

// tracingServer answers every chat request with a short stream, failing
// the first `fail` requests with 503 so a retry is seen, and keeps every
// request's traceparent in arrival order.
func tracingServer(t *testing.T, fail int) (*httptest.Server, func() []string) {
	t.Helper()
	var (
		mu   sync.Mutex
		seen []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("traceparent"))
		n := len(seen)
		mu.Unlock()
		if n <= fail {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		if strings.HasSuffix(r.URL.Path, "/embeddings") {
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprint(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,0.2]}],"model":"m","usage":{"prompt_tokens":1,"total_tokens":1}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = fmt.Fprint(w, roleChunk, chunk("a", ""), chunk("b", ""), chunk("", "stop"), usageChunk(3, 2, 0), "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// TestEveryRequestCarriesADistinctTraceparent: with the tracing option each
// call, chat and embed alike, sends a valid traceparent whose trace id is
// the result's traceId; no two calls share a trace id, a retry keeps its
// call's trace id under a new parent id, and the report names the slowest
// calls' trace ids, never the client's credential.
func TestEveryRequestCarriesADistinctTraceparent(t *testing.T) {
	t.Parallel()
	srv, seen := tracingServer(t, 1)
	const secret = "sk-trace-secret-0123456789abcdef"
	root := New()
	vu := newTestVUOn(t, root, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, model: 'm', apiKey: %q,
		tracing: {propagator: 'w3c', sampling: 1},
		retry: {attempts: 2, on: ['http_5xx'], backoff: {base: '1ms', max: '2ms'}}});`, srv.URL+"/v1", secret))

	const calls = 12
	var ids []string
	for i := range calls {
		res := vu.chat(`{messages: [{role: 'user', content: 'hi'}]}, {tags: {category: 'c` + fmt.Sprint(i%2) + `'}}`)
		require.Equal(t, true, res["ok"], "%v", res["error"])
		id, _ := res["traceId"].(string)
		require.Regexp(t, `^[0-9a-f]{32}$`, id, "call %d", i)
		ids = append(ids, id)
	}
	for range 2 { // the second embed's headers are the client's last set: its trace is still its own
		res := vu.call("embed", `{input: 'hi'}`)
		require.Equal(t, true, res["ok"], "%v", res["error"])
		embedID, _ := res["traceId"].(string)
		ids = append(ids, embedID)
	}

	got := seen()
	require.Len(t, got, calls+3, "one request per call, and the first call's retry")
	parents := map[string]bool{}
	perTrace := map[string]int{}
	for i, tp := range got {
		m := traceparentRE.FindStringSubmatch(tp)
		require.NotNil(t, m, "request %d: %q", i, tp)
		require.True(t, strings.HasSuffix(tp, "-01"), "sampling 1: every trace sampled")
		require.NotEqual(t, strings.Repeat("0", 32), m[1])
		require.NotEqual(t, strings.Repeat("0", 16), m[2])
		require.False(t, parents[m[2]], "request %d reuses a parent id", i)
		parents[m[2]] = true
		perTrace[m[1]]++
	}
	require.Len(t, perTrace, calls+2, "a distinct trace per call")
	require.Equal(t, 2, perTrace[ids[0]], "the retried call's two requests share its trace id")
	for i, id := range ids {
		require.Contains(t, perTrace, id, "call %d's traceId is the one its requests carried", i)
	}

	run := root.report.Intake().Snapshot()
	text, page := report.RenderText(run, nil, nil), string(report.RenderHTML(run, nil, report.RenderOptions{}))
	rec, err := report.MarshalRecord(run, nil, nil, nil)
	require.NoError(t, err)
	require.Contains(t, text, "slowest calls by E2E")
	for _, out := range []string{text, page, string(rec)} {
		named := 0
		for _, id := range ids[:calls] {
			if strings.Contains(out, id) {
				named++
			}
		}
		require.Equal(t, 2*5, named, "the five slowest of each of the two categories")
		require.NotContains(t, out, secret)
		require.NotContains(t, out, "trace-secret")
	}
	require.NotContains(t, vu.logs.String(), secret)
}

// TestTracingKeepsTheScriptsOwnTraceparent: a traceparent the call or the
// client sets is sent as it is, its trace id in the result; one that is not
// valid is sent too, but names no trace id. Without the option nothing is
// added.
func TestTracingKeepsTheScriptsOwnTraceparent(t *testing.T) {
	t.Parallel()
	srv, seen := tracingServer(t, 0)
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, model: 'm', tracing: {sampling: 0}});
		const plain = new llm.Client({baseURL: %q, model: 'm'});
		const fixed = new llm.Client({baseURL: %q, model: 'm', tracing: {}, headers: {traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'}});`,
		srv.URL+"/v1", srv.URL+"/v1", srv.URL+"/v1"))
	const own = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	res := vu.chat(`{messages: []}, {headers: {traceparent: '` + own + `'}}`)
	require.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", res["traceId"])
	res = vu.chat(`{messages: []}, {headers: {Traceparent: 'not-a-trace'}}`)
	require.Nil(t, res["traceId"], "an invalid traceparent names no trace")
	res = vu.chat(`{messages: []}`)
	require.Regexp(t, `^[0-9a-f]{32}$`, res["traceId"])
	vu.run(`globalThis.res = undefined; plain.chat({messages: []}).then(r => { globalThis.res = r })`)
	plainRes, _ := plain(vu.rt.VU.Runtime().Get("res").Export()).(map[string]any)
	require.Nil(t, plainRes["traceId"], "no tracing option: no trace id")

	vu.run(`globalThis.res = undefined; fixed.chat({messages: []}).then(r => { globalThis.res = r })`)
	fixedRes, _ := plain(vu.rt.VU.Runtime().Get("res").Export()).(map[string]any)
	require.Equal(t, "0af7651916cd43dd8448eb211c80319c", fixedRes["traceId"], "the client's own header is the script's trace too")

	got := seen()
	require.Len(t, got, 5)
	require.Equal(t, "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", got[4])
	require.Equal(t, own, got[0], "the script's own header is kept")
	require.Equal(t, "not-a-trace", got[1], "and sent as it is")
	require.Regexp(t, traceparentRE, got[2])
	require.True(t, strings.HasSuffix(got[2], "-00"), "sampling 0: an id, but the server is not asked to record")
	require.Contains(t, got[2], res["traceId"])
	require.Empty(t, got[3], "a client without tracing adds no header")
}

// TestTracingOptionErrorsNameTheOption: a propagator this client cannot
// send and a sampling share outside [0, 1] are refused when the script
// builds the client, naming the option.
func TestTracingOptionErrorsNameTheOption(t *testing.T) {
	t.Parallel()
	for code, want := range map[string]string{
		`{propagator: 'b3'}`:        "tracing.propagator must be 'w3c'",
		`{propagator: 'jaeger'}`:    "tracing.propagator must be 'w3c'",
		`{sampling: 1.01}`:          "tracing.sampling must be a number between 0 and 1",
		`{sampling: -1}`:            "tracing.sampling must be a number between 0 and 1",
		`{sampling: 'half'}`:        "tracing.sampling",
		`'w3c'`:                     "tracing",
		`{propagator: 'w3c', x: 1}`: `unknown option "tracing.x"`,
	} {
		rt := newTestRuntime(t)
		_, err := rt.VU.Runtime().RunString(`const llm = require('k6/x/llmstream');
			new llm.Client({baseURL: 'http://127.0.0.1:1', tracing: ` + code + `})`)
		require.ErrorContains(t, err, want, code)
	}
}
