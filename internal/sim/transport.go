package sim

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/rxstamp"
)

// Transport says how the HTTP server speaks: cleartext or TLS, and whether
// HTTP/2 is offered (over TLS by ALPN, in cleartext as h2c with prior
// knowledge). HTTP/1.1 is always served.
type Transport struct {
	TLS   *tls.Config // nil: cleartext
	HTTP2 bool
}

// Scheme is "https" with TLS, else "http".
func (t Transport) Scheme() string {
	if t.TLS != nil {
		return "https"
	}
	return "http"
}

// HTTPServer wraps the simulator in an http.Server speaking t. Every accepted
// connection is counted (llmsim_connections_accepted_total) and numbered, so
// the trace can say which requests opened a connection and which reused one.
func (s *Server) HTTPServer(t Transport) *http.Server {
	var p http.Protocols
	p.SetHTTP1(true)
	if t.HTTP2 {
		if t.TLS != nil {
			p.SetHTTP2(true)
		} else {
			p.SetUnencryptedHTTP2(true)
		}
	}
	return &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig:         t.TLS,
		Protocols:         &p,
		ConnContext:       s.connContext,
		ConnState:         s.connState,
	}
}

// StampReceives has the kernel date every packet the listener's connections
// receive (Linux; elsewhere it changes nothing), so a request's arrival in
// the trace is when its bytes reached the machine, not when the handler got
// a CPU. On a machine the client shares, a starved simulator otherwise reads
// requests late and books its own lateness to the client's TTFT error.
func StampReceives(ln net.Listener) net.Listener {
	rxstamp.Prime()
	return stampingListener{ln}
}

type stampingListener struct{ net.Listener }

func (l stampingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return rxstamp.Wrap(c), nil
}

// connInfo is one accepted connection: its number (1-based, in accept order),
// how many requests it has carried, and its receive stamps when it has them.
type connInfo struct {
	id       uint64
	requests atomic.Int64
	clock    *rxstamp.Conn
}

type connKey struct{}

func (s *Server) connContext(ctx context.Context, c net.Conn) context.Context {
	ci := &connInfo{id: s.connSeq.Add(1)}
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	ci.clock, _ = c.(*rxstamp.Conn)
	return context.WithValue(ctx, connKey{}, ci)
}

// arrivalOf is when the request's bytes arrived: the receive stamp of the
// connection's latest read, which brought the request (HTTP/1.1 reads a
// connection's next request only after the current response; under HTTP/2
// it is the latest frame's, never later than now), or now without stamps.
func arrivalOf(ctx context.Context, now time.Time) time.Time {
	if ci, ok := ctx.Value(connKey{}).(*connInfo); ok && ci.clock != nil {
		return ci.clock.Arrival(now)
	}
	return now
}

func (s *Server) connState(_ net.Conn, st http.ConnState) {
	switch st { //nolint:exhaustive // only the ends of a connection's life count
	case http.StateNew:
		s.connOpen.Add(1)
	case http.StateClosed, http.StateHijacked:
		s.connOpen.Add(-1)
	}
}

// connOf is the connection number of a request and its ordinal on that
// connection (1 = the request that opened it); 0, 0 when the request did not
// come through HTTPServer (in-process handlers).
func connOf(ctx context.Context) (uint64, int64) {
	ci, ok := ctx.Value(connKey{}).(*connInfo)
	if !ok {
		return 0, 0
	}
	return ci.id, ci.requests.Add(1)
}

// SelfSignedTLS is a TLS configuration with a fresh self-signed ECDSA P-256
// certificate for hosts (IP addresses or DNS names) plus 127.0.0.1, ::1 and
// localhost, valid from an hour ago for a year. Clients must skip
// verification (k6: insecureSkipTLSVerify) or trust the certificate.
func SelfSignedTLS(hosts ...string) (*tls.Config, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{Organization: []string{"llm-sim"}, CommonName: "llm-sim self-signed"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:              []string{"localhost"},
	}
	for _, h := range hosts {
		if h == "" {
			continue
		}
		if ip := net.ParseIP(h); ip != nil {
			if !ip.IsUnspecified() {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			}
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("self-signed certificate: %w", err)
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
	}, nil
}

// FileTLS is a TLS configuration with the PEM certificate chain and key of
// the two files.
func FileTLS(certFile, keyFile string) (*tls.Config, error) {
	if certFile == "" || keyFile == "" {
		return nil, errors.New("--tls-cert and --tls-key go together")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert %s / --tls-key %s: %w", certFile, keyFile, err)
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}, nil
}
