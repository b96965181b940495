package stream

import (
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A server that compresses the answer although the request asked for
// identity (Go's transport then leaves the body as it came): the call fails
// as a decode error naming the encoding, not as a silently truncated answer.
func TestAttemptRefusesAnUnaskedEncodingByName(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "identity", r.Header.Get("Accept-Encoding"))
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		_, _ = io.WriteString(zw, `data: {"choices":[{"delta":{"content":"hi"}}]}`+"\n\n"+
			`data: {"choices":[{"delta":{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
		_ = zw.Close()
	}))
	t.Cleanup(srv.Close)
	base := &http.Transport{}
	t.Cleanup(base.CloseIdleConnections)
	send := func(ctx context.Context, tap *Tap) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(`{}`))
		if err != nil {
			return err
		}
		req.Header.Set("Accept-Encoding", "identity") // as every call of the client asks
		resp, err := (&http.Client{Transport: tap.Transport(base)}).Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	a := Attempt{Config: Config{Spec: lookup(t, "openai-chat")}, Timeouts: Timeouts{Total: 10 * time.Second}}
	_, res := a.Run(context.Background(), send)
	require.False(t, res.OK)
	require.Equal(t, ErrDecode, res.Err.Type, "%s", res.Err.Message)
	require.Contains(t, res.Err.Message, "Content-Encoding: gzip")
	require.Contains(t, res.Err.Message, "asked for identity")
}

func TestUnaskedEncoding(t *testing.T) {
	t.Parallel()
	for ce, want := range map[string]string{"": "", "identity": "", "Identity": "", "gzip": "gzip", "br": "br", "gzip, identity": "gzip, identity"} {
		h := http.Header{}
		if ce != "" {
			h.Set("Content-Encoding", ce)
		}
		require.Equal(t, want, UnaskedEncoding(h), ce)
	}
}
