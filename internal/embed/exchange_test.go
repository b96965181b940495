package embed

import (
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

func words(s string) int { return len(strings.Fields(s)) }

func exchange(t *testing.T, h http.HandlerFunc, to stream.Timeouts) *Attempt {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	x := &Exchange{
		Transport: tr, URL: srv.URL + "/v1/embeddings", Header: http.Header{"Authorization": {"Bearer sk-secret"}},
		Body: []byte(`{"input":["a b","c"]}`), Timeouts: to, MaxBodySize: 1 << 20,
		Redact: func(s string) string { return strings.ReplaceAll(s, "sk-secret", "[redacted]") },
	}
	return x.Do(context.Background())
}

func TestAnEmbedAttemptIsTimedAndParsedApart(t *testing.T) {
	t.Parallel()
	a := exchange(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Server-Timing", "queue;dur=1.5, total;dur=4")
		_, _ = w.Write(fixtureBytes("openai_float.json"))
	}, stream.Timeouts{Total: 5 * time.Second})
	require.Nil(t, a.Err)
	api, _ := Lookup("openai")
	r := FinishEmbed(a, api, &Request{Inputs: []string{"a b", "c"}}, false, words)
	require.True(t, r.OK, "%+v", r.Err)
	assert.Equal(t, 2, r.Count)
	assert.Equal(t, 6, r.Dimension)
	assert.Equal(t, int64(8), r.InputTokens)
	assert.Equal(t, stream.TokensFromUsage, r.TokenSource)
	require.True(t, r.TTFB.Known() && r.Duration.Known() && r.Parse.Known(), "ttfb %v duration %v parse %v", r.TTFB, r.Duration, r.Parse)
	assert.Positive(t, r.TTFB.Or(0))
	assert.GreaterOrEqual(t, r.Duration.Or(0), r.TTFB.Or(0))
	assert.GreaterOrEqual(t, r.Parse.Or(0), time.Duration(0))
	assert.Equal(t, int64(len(`{"input":["a b","c"]}`)), r.RequestBytes)
	assert.Equal(t, int64(len(fixtureBytes("openai_float.json"))), r.ResponseBytes)
	assert.InDelta(t, 1.5, r.ServerTimings["queue"], 1e-9)
	assert.Positive(t, r.InputTokensPerSec())
}

func TestWithoutUsageTheTokenizerCounts(t *testing.T) {
	t.Parallel()
	a := exchange(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`[[1,2],[3,4]]`))
	}, stream.Timeouts{})
	api, _ := Lookup("tei")
	r := FinishEmbed(a, api, &Request{Inputs: []string{"a b", "c"}}, false, words)
	require.True(t, r.OK)
	assert.Equal(t, int64(3), r.InputTokens)
	assert.Equal(t, stream.TokensFromTokenizer, r.TokenSource)
	// no tokenizer: unknown, never 0 with a source
	r = FinishEmbed(a, api, &Request{Inputs: []string{"a b", "c"}}, false, nil)
	assert.Equal(t, int64(0), r.InputTokens)
	assert.Empty(t, r.TokenSource)
	assert.Equal(t, float64(0), r.InputTokensPerSec())
}

func TestFewerVectorsThanInputsIsADecodeError(t *testing.T) {
	t.Parallel()
	a := exchange(t, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(`[[1,2]]`)) }, stream.Timeouts{})
	api, _ := Lookup("tei")
	r := FinishEmbed(a, api, &Request{Inputs: []string{"a", "b"}}, false, nil)
	require.False(t, r.OK)
	assert.Equal(t, stream.ErrDecode, r.Err.Type)
	assert.Contains(t, r.Err.Message, "1 embeddings for 2 inputs")
}

func TestNonStreamedFailuresAreClassifiedAsChatsAre(t *testing.T) {
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) }) // first registered, so it runs after the servers close
	// Each handler reads the request first: net/http notices a client that
	// went away only once the body is read.
	slowHeaders := func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
	}
	stall := func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Length", "100")
		_, _ = w.Write([]byte(`{"data":[`))
		w.(http.Flusher).Flush()
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
	}
	cases := []struct {
		name string
		h    http.HandlerFunc
		to   stream.Timeouts
		want stream.ErrorType
		msg  string
	}{
		{"answer late", slowHeaders, stream.Timeouts{FirstToken: 50 * time.Millisecond}, stream.ErrTimeoutFirstToken, ""},
		{"body stalls", stall, stream.Timeouts{Idle: 50 * time.Millisecond}, stream.ErrTimeoutIdle, ""},
		{"total", stall, stream.Timeouts{Total: 80 * time.Millisecond}, stream.ErrTimeoutTotal, ""},
		{"429", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(429)
			_, _ = w.Write([]byte(`{"error":{"message":"slow down, sk-secret"}}`))
		}, stream.Timeouts{}, stream.ErrHTTP429, "HTTP 429: slow down, [redacted]"},
		{"5xx", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(503)
			_, _ = w.Write([]byte(`{"error":"Model is overloaded","error_type":"overloaded"}`))
		}, stream.Timeouts{}, stream.ErrHTTP5xx, "Model is overloaded"},
		{"4xx", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(413) }, stream.Timeouts{}, stream.ErrHTTP4xx, "HTTP 413"},
		{"html", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("<html>portal</html>"))
		}, stream.Timeouts{}, stream.ErrDecode, "expected JSON"},
		{"too large", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(strings.Repeat(" ", 2<<20)))
		}, stream.Timeouts{}, stream.ErrDecode, "maxBodySize"},
	}
	for _, c := range cases {
		a := exchange(t, c.h, c.to)
		require.NotNil(t, a.Err, c.name)
		assert.Equal(t, c.want, a.Err.Type, c.name)
		assert.Contains(t, a.Err.Message, c.msg, c.name)
		assert.NotContains(t, a.Err.Message, "sk-secret", c.name)
		if c.name == "429" {
			assert.Equal(t, measure.Of(2*time.Second), a.RetryAfter)
		}
		api, _ := Lookup("openai")
		r := FinishEmbed(a, api, &Request{Inputs: []string{"a"}}, false, words)
		assert.False(t, r.OK, c.name)
		assert.False(t, r.Parse.Known(), "nothing parsed: %s, parse %v", c.name, r.Parse)
	}
}

func TestARefusedConnectionIsANetworkError(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	x := &Exchange{Transport: &http.Transport{}, URL: url, Header: http.Header{}}
	a := x.Do(context.Background())
	require.NotNil(t, a.Err)
	assert.Equal(t, stream.ErrNetwork, a.Err.Type)
	assert.False(t, a.TTFB().Known(), "no response, no TTFB: %v", a.TTFB())
}

func TestARerankAttemptCountsPairsWithoutUsage(t *testing.T) {
	t.Parallel()
	a := exchange(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write(fixtureBytes("tei_rerank.json"))
	}, stream.Timeouts{})
	api, _ := LookupRerank("tei")
	req := &RerankRequest{Query: "which one", Documents: []string{"a", "b c", "d"}, TopN: 1}
	r := FinishRerank(a, api, req, words)
	require.True(t, r.OK, "%+v", r.Err)
	assert.Equal(t, 3, r.Items)
	assert.Equal(t, []Ranked{{2, 0.998}}, r.Ranked)
	assert.True(t, r.ClientTopN)
	assert.Equal(t, int64(3*2+4), r.InputTokens) // the query with every document
	assert.Equal(t, stream.TokensFromTokenizer, r.TokenSource)
}

func fixtureBytes(name string) []byte {
	b, err := testdataFS(name)
	if err != nil {
		panic(err)
	}
	return b
}

// A chunked answer (no Content-Length) is read through a reused buffer:
// each body is exactly what its server sent, a larger one before a smaller
// one leaves nothing of itself behind, and what a body holds does not change
// when the next answer is read.
func TestChunkedAnswersAreReadExactlyAndKeptApart(t *testing.T) {
	t.Parallel()
	chunked := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			for i := 0; i < len(body); i += 1000 { // flushes: the transfer is chunked
				_, _ = io.WriteString(w, body[i:min(i+1000, len(body))])
				w.(http.Flusher).Flush()
			}
		}
	}
	big := `{"pad":"` + strings.Repeat("x", 40_000) + `"}`
	small := `{"model":"m"}`
	first := exchange(t, chunked(big), stream.Timeouts{Total: 5 * time.Second})
	require.Nil(t, first.Err)
	second := exchange(t, chunked(small), stream.Timeouts{Total: 5 * time.Second})
	require.Nil(t, second.Err)
	assert.Equal(t, big, string(first.Body))
	assert.Equal(t, small, string(second.Body))
	assert.Equal(t, int64(len(small)), second.ResponseBytes)
}

// A chunked answer is parsed in a pooled buffer that the next answer
// reuses: what a result keeps from one must not change with the next.
func TestAResultOutlivesTheBufferItsAnswerWasReadIn(t *testing.T) {
	api, err := Lookup("openai")
	require.NoError(t, err)
	answer := func(model string) http.HandlerFunc {
		body := `{"data":[{"index":0,"embedding":[0.5,0.25]}],"model":"` + model + `","usage":{"prompt_tokens":3}}`
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, body)
			w.(http.Flusher).Flush() // chunked: no Content-Length
		}
	}
	req := &Request{Inputs: []string{"a"}}
	var results []*Result
	for _, model := range []string{"model-one", "model-two", "model-333"} {
		a := exchange(t, answer(model), stream.Timeouts{Total: 5 * time.Second})
		require.Nil(t, a.Err)
		require.NotNil(t, a.scratch, "a chunked answer is read into a pooled buffer")
		r := FinishEmbed(a, api, req, true, nil)
		require.True(t, r.OK, "%+v", r.Err)
		assert.Nil(t, a.Body, "released")
		results = append(results, r)
	}
	for i, model := range []string{"model-one", "model-two", "model-333"} {
		assert.Equal(t, model, results[i].Model)
		assert.Equal(t, [][]float64{{0.5, 0.25}}, results[i].Vectors)
		assert.Equal(t, 2, results[i].Dimension)
	}
}

// A server that compresses a JSON answer the request asked uncompressed
// (every call asks for identity): a decode error naming the encoding, not a
// parse error on the compressed bytes.
func TestAnEmbedAnswerCompressedUnaskedIsNamed(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		_, _ = zw.Write(fixtureBytes("openai_float.json"))
		_ = zw.Close()
	}))
	t.Cleanup(srv.Close)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	x := &Exchange{Transport: tr, URL: srv.URL + "/v1/embeddings", Header: http.Header{"Accept-Encoding": {"identity"}},
		Body: []byte(`{"input":["a b","c"]}`), Timeouts: stream.Timeouts{Total: 5 * time.Second}, MaxBodySize: 1 << 20}
	a := x.Do(context.Background())
	require.NotNil(t, a.Err)
	assert.Equal(t, stream.ErrDecode, a.Err.Type)
	assert.Contains(t, a.Err.Message, "Content-Encoding: gzip")
}

// An exchange sends a Host header as the request's virtual host (Go
// writes only the request's Host field), the jar's cookies for its URL
// without touching the shared headers, and keeps what the answer sets.
func TestAnExchangeSendsItsHostAndTheJarsCookies(t *testing.T) {
	t.Parallel()
	seen := make(chan [2]string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- [2]string{r.Host, r.Header.Get("Cookie")}
		http.SetCookie(w, &http.Cookie{Name: "route", Value: "r2", Path: "/"})
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(fixtureBytes("openai_float.json"))
	}))
	t.Cleanup(srv.Close)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	jar.SetCookies(u, []*http.Cookie{{Name: "session", Value: "s1"}})
	shared := http.Header{"Host": {"embed.internal"}}
	x := &Exchange{Transport: tr, URL: srv.URL + "/v1/embeddings", Header: shared, Body: []byte(`{"input":"a"}`),
		Timeouts: stream.Timeouts{Total: 5 * time.Second}, Jar: jar}
	a := x.Do(context.Background())
	require.Nil(t, a.Err)
	assert.Equal(t, [2]string{"embed.internal", "session=s1"}, <-seen)
	assert.Empty(t, shared.Get("Cookie"))
	assert.Len(t, jar.Cookies(u), 2)
}
