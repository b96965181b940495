package config

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/stream"
)

func TestParseDuration(t *testing.T) {
	t.Parallel()
	for in, want := range map[any]time.Duration{
		int64(250): 250 * time.Millisecond, 1.5: 1500 * time.Microsecond, "3s": 3 * time.Second,
		" 1m30s ": 90 * time.Second, "0": 0,
	} {
		got, err := ParseDuration(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []any{"-1s", "soon", int64(-5), true, map[string]any{}} {
		_, err := ParseDuration(bad)
		require.Error(t, err, bad)
	}
}

func TestClientDefaultsAndOverrides(t *testing.T) {
	t.Parallel()
	c, err := ParseClient(map[string]any{"baseURL": "http://h:1/v1/"})
	require.NoError(t, err)
	require.Equal(t, "http://h:1/v1", c.BaseURL)
	require.Equal(t, "openai-chat", c.Protocol.Name)
	require.Equal(t, DefaultTotalTimeout, c.Timeouts.Total)
	require.Equal(t, GapsSampled, c.GapSamples)
	require.Equal(t, 1, c.Retry.Attempts)

	c, err = ParseClient(map[string]any{
		"baseURL": "https://h", "timeouts": map[string]any{"idle": "2s", "firstToken": int64(500)},
		"retry": map[string]any{"attempts": int64(4), "on": []any{"http_429"}, "idempotencyKey": "X-Key",
			"backoff": map[string]any{"base": "10ms", "max": "1s", "jitter": 0.5}},
		"slo": map[string]any{"ttft": "800ms"}, "gapSamples": "request",
	})
	require.NoError(t, err)
	require.Equal(t, 2*time.Second, c.Timeouts.Idle)
	require.Equal(t, 500*time.Millisecond, c.Timeouts.FirstToken)
	require.Equal(t, DefaultConnectTimeout, c.Timeouts.Connect)
	require.Equal(t, 4, c.Retry.Attempts)
	require.Equal(t, ErrorTypes{stream.ErrHTTP429: true}, c.Retry.On)
	require.Equal(t, "X-Key", c.Retry.IdempotencyKey)
	require.Equal(t, Backoff{Base: 10 * time.Millisecond, Max: time.Second, Jitter: 0.5}, c.Retry.Backoff)
	require.True(t, c.SLO.Set())
	require.Equal(t, GapsPerRequest, c.GapSamples)
}

func TestCallParamsAndReservedTags(t *testing.T) {
	t.Parallel()
	c, err := ParseClient(map[string]any{"baseURL": "http://h", "gaps": true})
	require.NoError(t, err)
	call, err := ParseCall(map[string]any{"tags": map[string]any{"category": "short", "turn": int64(2)},
		"timeouts": map[string]any{"total": "5s"}}, c)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"category": "short", "turn": "2"}, call.Tags)
	require.Equal(t, 5*time.Second, call.Timeouts.Total)
	require.Equal(t, c.Timeouts.Idle, call.Timeouts.Idle)
	require.True(t, call.ResultGaps)
	_, err = ParseCall(map[string]any{"tags": map[string]any{"error_type": "x"}}, c)
	require.ErrorContains(t, err, "set by the client itself")
	_, err = ParseCall(map[string]any{"bogus": 1}, c)
	require.EqualError(t, err, `chat params: unknown option "bogus"; known: tags, headers, timeouts, path, gaps, onEvent, item`)
}

func TestClientErrors(t *testing.T) {
	t.Parallel()
	base := func(kv ...any) map[string]any {
		o := map[string]any{"baseURL": "http://h"}
		for i := 0; i < len(kv); i += 2 {
			o[kv[i].(string)] = kv[i+1]
		}
		return o
	}
	for _, tc := range []struct {
		in   map[string]any
		want string
	}{
		{nil, "Client options: baseURL is required (e.g. 'http://127.0.0.1:8000/v1')"},
		{map[string]any{"baseURL": "h:1"}, `Client options: baseURL must start with http:// or https://, got "h:1"`},
		{map[string]any{"baseURL": "htps://h/v1?key=sk-live-0123456789"}, // the error does not print the key
			`Client options: baseURL must start with http:// or https://, got "htps://h/v1?key=REDACTED"`},
		{base("timout", "3s"), `Client options: unknown option "timout" (did you mean "timeouts"?); known: baseURL, ` +
			"protocol, model, apiKey, name, path, headers, tags, timeouts, gapSamples, gapSampleRate, stallThreshold, slo, " +
			"continuousUsage, tokenizer, maxEventSize, maxBodySize, retry, fallback, fallbackOn, gaps, reconnect"},
		{base("retry", map[string]any{"backof": map[string]any{}}), `Client options: unknown option "retry.backof" ` +
			`(did you mean "backoff"?); known: attempts, on, backoff, respectRetryAfter, idempotencyKey, afterOutput`},
		{base("timeouts", map[string]any{"firstTokem": "1s"}), `Client options: unknown option "timeouts.firstTokem" ` +
			`(did you mean "firstToken"?); known: connect, firstToken, idle, total`},
		{base("timeouts", "3s"), "Client options: timeouts must be an object like {connect: '3s', firstToken: '10s', " +
			`idle: '30s', total: '10m'}, got "3s"`},
		{base("timeouts", map[string]any{"total": int64(0)}),
			"Client options: timeouts.total must be greater than 0 (it bounds every call)"},
		{base("protocol", "opneai-chat"), `Client options: protocol must be one of `},
		{base("protocol", int64(1)), `Client options: protocol must be a protocol name, got 1`},
		{base("gapSamples", "requests"), `Client options: gapSamples must be one of sampled, event, request, off, got "requests" ` +
			`(did you mean "request"?)`},
		{base("stallThreshold", "fast"), `Client options: stallThreshold must be a duration like '3s'`},
		{base("slo", map[string]any{"ttft": true}), `Client options: slo.ttft must be a duration like '3s' or a ` +
			`number of milliseconds, got true`},
		{base("maxEventSize", 1.5), "Client options: maxEventSize must be a positive whole number, got 1.5"},
		{base("retry", map[string]any{"attempts": int64(101)}), "Client options: retry.attempts must be at most 100, got 101"},
		{base("retry", map[string]any{"backoff": map[string]any{"jitter": int64(2)}}),
			"Client options: retry.backoff.jitter must be a number between 0 and 1, got 2"},
		{base("retry", map[string]any{"on": []any{"http_429", "http_42"}}),
			`Client options: retry.on[1] must be one of`},
		{base("retry", map[string]any{"on": "http_429"}),
			`Client options: retry.on must be a list of error types like ['http_429', 'http_5xx'], got "http_429"`},
		{base("retry", map[string]any{"idempotencyKey": int64(1)}),
			"Client options: retry.idempotencyKey must be true or a header name, got 1"},
		{base("headers", map[string]any{"X-A": map[string]any{}}), "Client options: headers.X-A must be a string, got an object"},
		{base("gapSamples", "every"), "Client options: gapSamples must be one of"},
		{base("gapSampleRate", int64(0)), "Client options: gapSampleRate must be a positive whole number"},
		{base("reconnect", map[string]any{"attempts": int64(2)}), "Client options: reconnect is for raw event streams " +
			"(protocol 'sse'), not openai-chat: an LLM answer cannot resume mid-way"},
	} {
		_, err := ParseClient(tc.in)
		require.Error(t, err, tc.in)
		require.True(t, strings.HasPrefix(err.Error(), tc.want), "%v\n got: %s\nwant: %s…", tc.in, err, tc.want)
	}
}

func TestClientNullIsUnsetAndRetryDefaults(t *testing.T) {
	t.Parallel()
	c, err := ParseClient(map[string]any{"baseURL": "http://h", "protocol": nil, "timeouts": nil, "headers": nil,
		"gapSamples": nil, "retry": map[string]any{"attempts": int64(3), "idempotencyKey": true},
		"reconnect": nil, "maxEventSize": nil})
	require.NoError(t, err)
	require.Equal(t, "openai-chat", c.Protocol.Name)
	require.Equal(t, DefaultIdleTimeout, c.Timeouts.Idle)
	require.Nil(t, c.Headers)
	require.Equal(t, GapsSampled, c.GapSamples)
	require.Equal(t, 3, c.Retry.Attempts)
	require.Equal(t, "Idempotency-Key", c.Retry.IdempotencyKey)
	require.True(t, c.Retry.RespectRetryAfter, "a given retry object starts from the default policy")
	require.True(t, c.Retry.On[stream.ErrHTTP5xx])
	require.Equal(t, Backoff{Base: 200 * time.Millisecond, Max: 5 * time.Second, Jitter: 0.2}, c.Retry.Backoff)

	c, err = ParseClient(map[string]any{"baseURL": "http://h", "protocol": "sse", "reconnect": map[string]any{}})
	require.NoError(t, err)
	require.Equal(t, Reconnect{Delay: time.Second}, c.Reconnect)
}

func TestCallKeepsClientDefaults(t *testing.T) {
	t.Parallel()
	c, err := ParseClient(map[string]any{"baseURL": "http://h", "path": "/p", "timeouts": map[string]any{"idle": "7s"}})
	require.NoError(t, err)
	call, err := ParseCall(map[string]any{"path": "", "timeouts": map[string]any{"firstToken": int64(100)},
		"gaps": nil, "onEvent": func() {}, "item": map[string]any{}}, c)
	require.NoError(t, err)
	require.Equal(t, "/p", call.Path)
	require.Equal(t, 7*time.Second, call.Timeouts.Idle)
	require.Equal(t, 100*time.Millisecond, call.Timeouts.FirstToken)
	require.NotNil(t, call.OnEvent)

	_, err = ParseCall(map[string]any{"tags": map[string]any{"cache": "x"}}, c)
	require.EqualError(t, err, "chat params: tags.cache is set by the client itself and cannot be overridden")
	_, err = ParseCall(map[string]any{"timeouts": map[string]any{"total": "0s"}}, c)
	require.EqualError(t, err, "chat params: timeouts.total must be greater than 0 (it bounds every call)")
}
