package redact

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDumpRequest(t *testing.T) {
	t.Parallel()
	body := `{"model":"m","messages":[{"role":"user","content":"my key is ` + token + `"}]}`
	req, err := http.NewRequest(http.MethodPost,
		"http://llm.test/v1/chat/completions?api-version=2024-02-01&key=AIzaQueryKey-0123456789", bytes.NewBufferString(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("X-Goog-Api-Key", "AIzaHeaderKey-0123456789")
	req.Header.Set("Idempotency-Key", "0123456789abcdef")
	var r *Redactor // learned nothing: the credential headers and parameters are still hidden
	for _, full := range []bool{false, true} {
		dump := r.DumpRequest(req, full)
		require.NotContains(t, dump, "AIzaQueryKey-0123456789")
		require.NotContains(t, dump, "AIzaHeaderKey-0123456789")
		require.Contains(t, dump, "POST /v1/chat/completions?api-version=2024-02-01&key=REDACTED HTTP/1.1")
		require.Contains(t, dump, "Authorization: "+Mark)
		require.Contains(t, dump, "Idempotency-Key: 0123456789abcdef", "not a credential")
		require.Equal(t, full, strings.Contains(dump, `"role":"user"`), "the body only in full")
	}
	require.Contains(t, r.DumpRequest(req, false), "\nHost: llm.test\n")
	req.Host = "virtual.test" // a Host header's virtual host, which the request is sent for
	require.Contains(t, r.DumpRequest(req, false), "\nHost: virtual.test\n")
	require.Contains(t, r.DumpRequest(req, true), token, "an unknown token in a body is not guessed")
	learned := New().Headers(map[string]string{"authorization": "Bearer " + token})
	require.NotContains(t, learned.DumpRequest(req, true), token, "a known one is redacted from the body")
}

func TestDumpResponse(t *testing.T) {
	t.Parallel()
	resp := &http.Response{Proto: "HTTP/1.1", Status: "401 Unauthorized", Header: http.Header{
		"Www-Authenticate": {`Bearer realm="api"`},
		"X-Echo":           {"you sent " + token},
		"X-Request-Id":     {"req-1"},
	}, Body: io.NopCloser(strings.NewReader(""))}
	r := New().Headers(map[string]string{"Authorization": "Bearer " + token})
	dump := r.DumpResponse(resp)
	require.NotContains(t, dump, token)
	require.Contains(t, dump, "X-Echo: you sent "+Mark)
	require.Contains(t, dump, "X-Request-Id: req-1")
	require.Contains(t, dump, "401 Unauthorized")
}
