package stream

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Result.Sent tells a request that went out (whatever came back) from one
// that never left: what the server's own request count can be held against.
func TestSentTellsARequestThatWentOutFromOneThatNeverLeft(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/drop" {
			hj, _ := w.(http.Hijacker)
			c, _, _ := hj.Hijack()
			_ = c.Close() // read the request, answer nothing
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refused := "http://" + l.Addr().String()
	require.NoError(t, l.Close())

	base := &http.Transport{}
	t.Cleanup(base.CloseIdleConnections)
	a := Attempt{Config: Config{Spec: lookup(t, "openai-chat")}, Timeouts: Timeouts{Total: 10 * time.Second}}

	_, res := a.Run(context.Background(), post(refused, base, nil))
	require.False(t, res.OK)
	require.False(t, res.Sent, "connection refused: nothing went out")
	require.Zero(t, res.Status)

	_, res = a.Run(context.Background(), post(srv.URL+"/drop", base, nil))
	require.False(t, res.OK)
	require.True(t, res.Sent, "the request went out, no answer came")
	require.Zero(t, res.Status)

	_, res = a.Run(context.Background(), post(srv.URL, base, nil))
	require.True(t, res.Sent)
	require.Equal(t, http.StatusServiceUnavailable, res.Status)
}
