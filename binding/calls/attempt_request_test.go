package calls

import (
	"bytes"
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// An attempt's request is made in the place it is given, on the call's
// parsed URL, and goes out as NewRequestWithContext's would, byte for
// byte: an address with an empty port too, which gets that request and
// leaves the call's URL as it was.
func TestHTTPRequestIsNewRequestsOnTheParsedURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw, method string
		inPlace     bool
	}{
		{"http://a:1/v1/chat?x=1", http.MethodPost, true},
		{"https://api.example/v1/messages", http.MethodPost, true},
		{"http://a:1/events", http.MethodGet, true},
		{"http://a:/v1/chat", http.MethodPost, false},
	} {
		c := &Client{}
		r := &request{method: tc.method, url: tc.raw, header: http.Header{"Content-Type": {"application/json"}}}
		r.k6URL, r.urlErr = c.k6URL(r.url, "n")
		require.NoError(t, r.urlErr)
		var place http.Request
		got, err := r.httpRequest(context.Background(), &place)
		require.NoError(t, err)
		want, err := http.NewRequestWithContext(context.Background(), tc.method, tc.raw, nil)
		require.NoError(t, err)
		require.Equal(t, tc.inPlace, got == &place, tc.raw)
		require.Equal(t, tc.inPlace, got.URL == r.k6URL.GetURL(), tc.raw)
		require.Equal(t, []any{want.Method, want.Proto, want.ProtoMajor, want.ProtoMinor, want.URL.String()},
			[]any{got.Method, got.Proto, got.ProtoMajor, got.ProtoMinor, got.URL.String()}, tc.raw)
		for _, req := range []*http.Request{got, want} {
			req.Header = r.header
			setPayload(req, []byte(`{"a":1}`), nil)
		}
		var gotWire, wantWire bytes.Buffer
		require.NoError(t, got.Write(&gotWire))
		require.NoError(t, want.Write(&wantWire))
		require.Equal(t, wantWire.String(), gotWire.String(), tc.raw)
	}
	c := &Client{}
	u, err := c.k6URL("http://a:/v1/chat", "n")
	require.NoError(t, err)
	r := &request{method: http.MethodPost, url: "http://a:/v1/chat", k6URL: u}
	_, err = r.httpRequest(context.Background(), &http.Request{})
	require.NoError(t, err)
	require.Equal(t, "a:", u.GetURL().Host, "the call's URL is not changed")
}
