package sim

import (
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serveTransport runs the simulator's own http.Server (HTTPServer) on a
// loopback port, its connections stamped as llm-sim's are (StampReceives),
// and returns its base URL and trace.
func serveTransport(t *testing.T, tr Transport) (string, *syncBuffer) {
	t.Helper()
	return serveSim(t, tr, nil)
}

// serveSim is serveTransport with the handler wrapped by wrap (nil: as is).
func serveSim(t *testing.T, tr Transport, wrap func(http.Handler) http.Handler) (string, *syncBuffer) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Models = []ModelConfig{fastModel("m")}
	trace := &syncBuffer{}
	cfg.TraceWriter = trace
	srv, err := New(cfg)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	hs := srv.HTTPServer(tr)
	if wrap != nil {
		hs.Handler = wrap(hs.Handler)
	}
	stamped := StampReceives(ln)
	go func() {
		if tr.TLS != nil {
			_ = hs.ServeTLS(stamped, "", "")
		} else {
			_ = hs.Serve(stamped)
		}
	}()
	t.Cleanup(func() {
		_ = srv.Close()
		_ = hs.Close()
	})
	return tr.Scheme() + "://" + ln.Addr().String(), trace
}

// fullStream posts a streamed chat request and reads the body to EOF.
func fullStream(t *testing.T, c *http.Client, url string, tokens int) *http.Response {
	t.Helper()
	resp, err := c.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(chatBody("hi", tokens, `"stream":true`)))
	require.NoError(t, err)
	defer resp.Body.Close()
	events, err := readSSE(resp.Body)
	require.NoError(t, err)
	require.NotEmpty(t, events)
	assert.Equal(t, "[DONE]", events[len(events)-1].data)
	content := 0
	for _, e := range events[:len(events)-1] {
		if ch, _ := parseChunk(t, e.data); len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != nil && *ch.Choices[0].Delta.Content != "" {
			content++
		}
	}
	assert.Equal(t, tokens, content)
	assert.NotEmpty(t, resp.Trailer.Get("Server-Timing"), "the trailer arrives after EOF")
	return resp
}

func TestHTTP2OverH2CAndTLS(t *testing.T) {
	clear, _ := serveTransport(t, Transport{HTTP2: true})
	h2c := &http.Transport{Protocols: new(http.Protocols)}
	h2c.Protocols.SetUnencryptedHTTP2(true)
	t.Cleanup(h2c.CloseIdleConnections)
	assert.Equal(t, "HTTP/2.0", fullStream(t, &http.Client{Transport: h2c, Timeout: 30 * time.Second}, clear, 30).Proto)

	cfg, err := SelfSignedTLS("127.0.0.1", "sim.test")
	require.NoError(t, err)
	secure, _ := serveTransport(t, Transport{TLS: cfg, HTTP2: true})
	h2 := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: true} //nolint:gosec // self-signed test server
	t.Cleanup(h2.CloseIdleConnections)
	resp := fullStream(t, &http.Client{Transport: h2, Timeout: 30 * time.Second}, secure, 30)
	assert.Equal(t, "HTTP/2.0", resp.Proto)
	require.NotNil(t, resp.TLS)
	leaf := resp.TLS.PeerCertificates[0]
	assert.Contains(t, leaf.DNSNames, "sim.test", "the --addr host is in the certificate")
	assert.Contains(t, leaf.DNSNames, "localhost")
}

func TestTraceNumbersConnections(t *testing.T) {
	url, trace := serveTransport(t, Transport{})
	c := &http.Client{Transport: &http.Transport{}, Timeout: 30 * time.Second}
	for range 3 {
		fullStream(t, c, url, 5) // read to EOF: the connection goes back to the pool
	}
	c.CloseIdleConnections()
	fresh := &http.Client{Transport: &http.Transport{}, Timeout: 30 * time.Second}
	fullStream(t, fresh, url, 5)
	fresh.CloseIdleConnections()

	var got [][2]int64
	for _, r := range trace.records(t) {
		got = append(got, [2]int64{int64(r.Conn), r.ConnRequest})
		assert.Equal(t, "HTTP/1.1", r.Proto)
	}
	assert.Equal(t, [][2]int64{{1, 1}, {1, 2}, {1, 3}, {2, 1}}, got, "(connection, request on it)")

	resp, err := http.Get(url + "/metrics") //nolint:noctx // test
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Contains(t, string(b), "llmsim_connections_accepted_total 3\n", "two streaming connections and this one")
	http.DefaultClient.CloseIdleConnections()
}

func TestFileTLS(t *testing.T) {
	cfg, err := SelfSignedTLS()
	require.NoError(t, err)
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cfg.Certificates[0].Certificate[0]}), 0o600))
	_, err = FileTLS(cert, key)
	require.ErrorContains(t, err, "--tls-key", "no key file yet")
	_, err = FileTLS(cert, "")
	require.ErrorContains(t, err, "go together")

	der, err := x509.MarshalECPrivateKey(cfg.Certificates[0].PrivateKey.(*ecdsa.PrivateKey))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600))
	loaded, err := FileTLS(cert, key)
	require.NoError(t, err)
	url, _ := serveTransport(t, Transport{TLS: loaded, HTTP2: true})
	h2 := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: true} //nolint:gosec // self-signed test server
	t.Cleanup(h2.CloseIdleConnections)
	assert.Equal(t, "HTTP/2.0", fullStream(t, &http.Client{Transport: h2, Timeout: 30 * time.Second}, url, 3).Proto)
}

// A simulator that gets its CPU late (here: 60 ms before the handler runs)
// still dates a request by when its bytes arrived, on a StampReceives
// listener: the trace's arrival precedes the handler's headers by the delay.
func TestArrivalIsTheRequestsReceiveStamp(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("receive stamps are read on Linux only")
	}
	const late = 60 * time.Millisecond
	var began atomic.Int64 // when the late handler began, a trace stamp
	url, trace := serveSim(t, Transport{}, func(sim http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			began.Store(nowNS())
			time.Sleep(late)
			sim.ServeHTTP(w, r)
		})
	})
	c := &http.Client{Timeout: 30 * time.Second}
	for range 2 { // a new connection, then a reused one
		fullStream(t, c, url, 3)
		recs := trace.records(t)
		rec := recs[len(recs)-1]
		// Orderings, not durations, so that a loaded machine meets them: the
		// bytes arrived before the handler began, and so before it slept.
		assert.LessOrEqual(t, rec.ArrivalNS, began.Load(), "the arrival is the bytes', not the late handler's")
		assert.GreaterOrEqual(t, time.Duration(rec.HeadersNS-rec.ArrivalNS), late-time.Millisecond)
	}
}
