package module

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// k6's transport negotiates HTTP/2 (ForceAttemptHTTP2), and once it has been
// used its TLS config offers "h2" by ALPN. A '1.1' clone of it must not offer
// "h2": an HTTPS server that speaks both would choose it, and the HTTP/1.1
// client would read HTTP/2 frames (every call failed with EOF against
// llm-sim --tls).
func TestHTTP1OverTLSAfterK6sTransportNegotiatedH2(t *testing.T) {
	t.Parallel()
	srv := tlsServer(t)

	vu := newTestVU(t, `const auto = new llm.Client({baseURL: '`+srv.URL+`'});
		const h1 = new llm.Client({baseURL: '`+srv.URL+`', http: '1.1'});`)
	tls := srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()               //nolint:forcetypeassert
	vu.state().Transport = &http.Transport{TLSClientConfig: tls, ForceAttemptHTTP2: true} // as k6 builds it
	vu.run(`auto.chat({messages: []}).then((r) => { globalThis.first = JSON.stringify([r.ok, r.proto]) })`)
	require.JSONEq(t, `[true, "HTTP/2.0"]`, vu.rt.VU.Runtime().Get("first").String())
	vu.run(`h1.chat({messages: []}).then((r) => { globalThis.second = JSON.stringify([r.ok, r.proto, r.error]) })`)
	require.JSONEq(t, `[true, "HTTP/1.1", null]`, vu.rt.VU.Runtime().Get("second").String())
	vu.closeIdle()
}
