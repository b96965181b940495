package stream

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/protocol"
)

func openAICall(t *testing.T) *Call {
	t.Helper()
	spec, err := protocol.Lookup("openai-chat")
	require.NoError(t, err)
	return NewCall(Config{Spec: spec}, time.Time{})
}

const doneBody = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\n" +
	"data: [DONE]\n\n"

// trailerBody is a body that fills resp.Trailer when it reaches EOF, as Go's
// transport does.
type trailerBody struct {
	r    io.Reader
	resp *http.Response
}

func (b *trailerBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF { //nolint:errorlint // io.EOF by contract
		b.resp.Trailer = http.Header{"Server-Timing": {"queue;dur=7"}}
	}
	return n, err
}

func TestResponseHeadersAndTrailersFinishTheCall(t *testing.T) {
	t.Parallel()
	c := openAICall(t)
	resp := &http.Response{StatusCode: 200, Header: http.Header{
		"Content-Type": {"text/event-stream"}, "X-Request-Id": {"req-9"}, "Server-Timing": {"queue;dur=5, prefill;dur=2"},
		"Retry-After": {"3"},
	}}
	c.Begin(time.Now())
	c.Respond(resp, time.Now())
	// The body goes on after [DONE] (a comment line, then EOF): the drain reads it.
	require.NoError(t, c.Read(&trailerBody{r: strings.NewReader(doneBody + ": end\n\n"), resp: resp}))
	r := c.Finish()
	require.True(t, r.OK, "%v", r.Err)
	require.Equal(t, 200, r.Status)
	require.Equal(t, "req-9", r.RequestID)
	require.Equal(t, map[string]float64{"queue": 7, "prefill": 2}, r.ServerTimings, "the trailer wins over the header")
	require.Equal(t, measure.Of(3*time.Second), r.RetryAfter)
	require.True(t, r.TTFB.Known())
	require.GreaterOrEqual(t, r.TTFB.Or(0), time.Duration(0))
}

// The request id comes from the first of the providers' headers that has
// one, as read off a response (canonical keys); the names it looks up are
// canonical, as a response's keys are.
func TestRequestIDFromTheProvidersHeaders(t *testing.T) {
	t.Parallel()
	for _, k := range append(requestIDHeaders[:], serverTimingHeader) {
		require.Equal(t, http.CanonicalHeaderKey(k), k)
	}
	for _, tc := range []struct {
		header http.Header
		want   string
	}{
		{http.Header{"Request-Id": {"r-1"}}, "r-1"},
		{http.Header{"X-Amzn-Requestid": {"aws-2"}}, "aws-2"},
		{http.Header{"X-Request-Id": {""}, "Request-Id": {"r-3"}}, "r-3"},
		{http.Header{"X-Request-Id": {"x-4"}, "Request-Id": {"r-4"}}, "x-4"},
		{http.Header{"X-Request-Id": {strings.Repeat("i", 200)}}, strings.Repeat("i", 128) + "…"},
		{http.Header{}, ""},
		{nil, ""},
	} {
		require.Equal(t, tc.want, requestID(tc.header), "%v", tc.header)
	}
}

func TestResponseStatusAndHTMLAreClassified(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		ct     string
		want   ErrorType
	}{
		{429, "application/json", ErrHTTP429},
		{503, "application/json", ErrHTTP5xx},
		{404, "application/json", ErrHTTP4xx},
		{200, "text/html; charset=utf-8", ErrDecode},
	} {
		c := openAICall(t)
		c.Respond(&http.Response{StatusCode: tc.status, Header: http.Header{"Content-Type": {tc.ct}}}, time.Now())
		require.NoError(t, c.Read(strings.NewReader("<html>busy</html>")))
		r := c.Finish()
		require.False(t, r.OK)
		require.Equal(t, tc.want, r.Err.Type, "HTTP %d %s", tc.status, tc.ct)
		require.Contains(t, r.Err.Message, "busy")
		require.Equal(t, tc.status, r.Status)
		require.False(t, r.RetryAfter.Known(), "no Retry-After: %v", r.RetryAfter)
	}
}

func TestFailureBeforeTheTransportHasAStart(t *testing.T) {
	t.Parallel()
	c := openAICall(t)
	c.Fail(ErrNetwork, "invalid URL")
	r := c.Finish()
	require.False(t, r.Start.IsZero())
	require.Equal(t, measure.Of(0), r.E2E)
	require.False(t, r.TTFB.Known(), "no headers, no TTFB: %v", r.TTFB)
	require.Equal(t, 0, r.Status)
}

func TestErrorMessagesAreRedacted(t *testing.T) {
	t.Parallel()
	c := openAICall(t)
	c.cfg.Redact = func(s string) string { return strings.ReplaceAll(s, "sk-secret", "[REDACTED]") }
	c.Respond(&http.Response{StatusCode: 401, Header: http.Header{}}, time.Now())
	require.NoError(t, c.Read(strings.NewReader(`{"error":"bad key sk-secret"}`)))
	r := c.Finish()
	require.NotContains(t, r.Err.Message, "sk-secret")
	require.Contains(t, r.Err.Message, "[REDACTED]")
}

func TestGapsAreCompactAndExact(t *testing.T) {
	t.Parallel()
	require.Equal(t, uint32(1500), compactGap(1500*time.Microsecond+400))
	require.Equal(t, uint32(1501), compactGap(1500*time.Microsecond+600))
	require.Equal(t, uint32(0), compactGap(-time.Second))
	require.Equal(t, uint32(1<<32-1), compactGap(100*time.Hour))
	g := Gaps{1500, 20}
	require.Equal(t, 1500*time.Microsecond, g.At(0))
	require.Equal(t, []time.Duration{1500 * time.Microsecond, 20 * time.Microsecond}, g.Durations())
	require.Nil(t, Gaps(nil).Durations())
	require.Equal(t, g, GapsOf(1500*time.Microsecond+400, 20*time.Microsecond))
}

func TestCacheState(t *testing.T) {
	t.Parallel()
	require.Equal(t, CacheUnknown, cacheState(nil))
	require.Equal(t, CacheUnknown, cacheState(&protocol.Usage{}))
	require.Equal(t, CacheHit, cacheState(&protocol.Usage{PromptTokens: 10, CachedTokens: 8, CachedReported: true}))
	require.Equal(t, CacheMiss, cacheState(&protocol.Usage{PromptTokens: 10, CachedReported: true}))
	// Usage without a cached-token field is no reading of the cache at all.
	require.Equal(t, CacheUnknown, cacheState(&protocol.Usage{PromptTokens: 10}))
	require.Equal(t, "hit", CacheHit.String())
	require.Equal(t, "miss", CacheMiss.String())
	require.Equal(t, "unknown", CacheUnknown.String())
}
