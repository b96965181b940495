package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// simWith serves one fast model "m" with cfg's trace options changed by set.
func simWith(t *testing.T, set func(*Config, *ModelConfig)) *testSim {
	t.Helper()
	cfg := DefaultConfig()
	m := fastModel("m")
	set(&cfg, &m)
	cfg.Models = []ModelConfig{m}
	tr := &syncBuffer{}
	cfg.TraceWriter = tr
	srv, err := New(cfg)
	require.NoError(t, err)
	ts := httptest.NewServer(srv.Handler())
	s := &testSim{t: t, srv: srv, ts: ts, trace: tr,
		client: &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 30 * time.Second}}
	t.Cleanup(func() {
		s.client.CloseIdleConnections()
		ts.Close()
		_ = srv.Close()
	})
	return s
}

func drain(t *testing.T, resp *http.Response) {
	t.Helper()
	_, err := io.Copy(io.Discard, resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
}

// With trace_bodies a record holds the request as sent, credentials
// redacted; without it, neither body nor headers.
func TestTraceBodies(t *testing.T) {
	body := chatBody("what the client sent", 3, streamUsage)
	s := simWith(t, func(c *Config, _ *ModelConfig) { c.TraceBodies = true })
	drain(t, s.post("/v1/chat/completions", body, "X-Session-Affinity", "s-1", "Authorization", "Bearer sk-secret"))
	require.Eventually(t, func() bool { return len(s.trace.records(t)) == 1 }, 5*time.Second, 5*time.Millisecond)
	r := s.trace.records(t)[0]
	require.JSONEq(t, body, string(r.Body))
	require.Equal(t, "s-1", r.Headers["X-Session-Affinity"])
	require.Equal(t, "[redacted]", r.Headers["Authorization"])
	line, _ := json.Marshal(r)
	require.NotContains(t, string(line), "sk-secret")

	off := simWith(t, func(*Config, *ModelConfig) {})
	drain(t, off.post("/v1/chat/completions", body))
	require.Eventually(t, func() bool { return len(off.trace.records(t)) == 1 }, 5*time.Second, 5*time.Millisecond)
	r = off.trace.records(t)[0]
	require.Nil(t, r.Body)
	require.Nil(t, r.Headers)
}

// A prompt and max_tokens over max_context_tokens get vLLM's 400; within
// it, an answer.
func TestContextLimit(t *testing.T) {
	s := simWith(t, func(_ *Config, m *ModelConfig) { m.MaxContextTokens = 40 })
	ok := s.post("/v1/chat/completions", chatBody("short", 5, streamUsage))
	require.Equal(t, http.StatusOK, ok.StatusCode)
	drain(t, ok)
	over := s.post("/v1/chat/completions", chatBody(strings.Repeat("word ", 60), 5, streamUsage))
	require.Equal(t, http.StatusBadRequest, over.StatusCode)
	b, _ := io.ReadAll(over.Body)
	_ = over.Body.Close()
	require.Contains(t, string(b), "context_length_exceeded")
	require.Contains(t, string(b), "maximum context length is 40 tokens")
}
