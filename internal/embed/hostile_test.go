package embed

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// smallStack lowers the process's goroutine stack limit for one test, so
// that a validator that recurses once per nesting level dies at once on a
// few MB of stack, not after growing to Go's 1 GB default (which is what a
// k6 process did: "fatal error: stack overflow").
func smallStack(t *testing.T) {
	t.Helper()
	old := debug.SetMaxStack(64 << 20)
	t.Cleanup(func() { debug.SetMaxStack(old) })
}

// TestAHostileEmbeddingsServerFailsOneCallNotTheRun: an answer of 200
// application/json whose body is millions of '[' is a decode failure of
// that call, and the next call on the same client goes on.
func TestAHostileEmbeddingsServerFailsOneCallNotTheRun(t *testing.T) {
	smallStack(t)
	hostile := bytes.Repeat([]byte("["), 6_000_000)
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if calls.Add(1) == 1 {
			_, _ = w.Write(hostile)
			return
		}
		_, _ = w.Write(fixtureBytes("openai_float.json"))
	}))
	t.Cleanup(srv.Close)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	api, err := Lookup("openai")
	require.NoError(t, err)
	call := func() *Result {
		x := &Exchange{
			Transport: tr, URL: srv.URL + "/v1/embeddings", Header: http.Header{}, Body: []byte(`{"input":["a b","c"]}`),
			Timeouts: stream.Timeouts{Total: 30 * time.Second}, MaxBodySize: 256 << 20,
			Redact: func(s string) string { return s },
		}
		return FinishEmbed(x.Do(context.Background()), api, &Request{Inputs: []string{"a b", "c"}}, false, nil)
	}
	r := call()
	require.False(t, r.OK)
	assert.Equal(t, stream.ErrDecode, r.Err.Type)
	assert.Contains(t, r.Err.Message, "nested too deeply")
	r = call()
	require.True(t, r.OK, "%+v", r.Err)
	assert.Equal(t, 2, r.Count)
}

// TestEveryEmbeddingsParserRefusesDeepNesting: each API's parser (and the
// error-message reader) refuses a body nested past the limit, whatever its
// shape, without validating it recursively.
func TestEveryEmbeddingsParserRefusesDeepNesting(t *testing.T) {
	smallStack(t)
	deep := func(open, close string, n int) []byte {
		return []byte(strings.Repeat(open, n) + strings.Repeat(close, n))
	}
	for _, body := range [][]byte{
		deep("[", "]", 2_000_000),
		deep(`{"a":`, "}", 1_000_000),
		[]byte(`{"data":` + strings.Repeat("[", 2_000_000) + strings.Repeat("]", 2_000_000) + `}`),
	} {
		for _, name := range Names() {
			api, _ := Lookup(name)
			_, err := api.Parse(body, false)
			require.Error(t, err, name)
			assert.Contains(t, err.Error(), "nested too deeply", name)
		}
		for _, name := range RerankNames() {
			api, _ := LookupRerank(name)
			_, err := api.Parse(body, &RerankRequest{Query: "q", Documents: []string{"a"}})
			require.Error(t, err, name)
			assert.Contains(t, err.Error(), "nested too deeply", name)
		}
		assert.Empty(t, ErrorMessage(body))
	}
}
