package calls

// The transports a VU's clients send through: k6's own, cloned per HTTP
// version, dialing with k6's dialer so its hosts, blocked addresses and byte
// counts hold, with every connection's packets stamped by the kernel.

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"go.k6.io/k6/lib"
	"go.k6.io/k6/lib/netext"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/connect"
	"github.com/llmstream/xk6-llmstream/internal/rxstamp"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// transports are the transports of one VU's clients, one per HTTP version
// for streamed calls and one per HTTP version for answers read whole (embed,
// rerank), each cloned from k6's own so its dialer, TLS settings, hosts and
// blocked addresses hold. A clone also keeps an idle connection for every
// stream a VU has in flight: k6 sizes its idle pool for http.batch
// (batchPerHost, 6 by default), and a VU with more concurrent streams would
// close the surplus and dial again on the next call.
type Transports struct {
	mu     sync.Mutex
	base   http.RoundTripper
	byMode map[transportKey]http.RoundTripper
	// iteration is the VU's iteration of the latest call (NewIteration).
	iteration int64
}

// transportKey names a transport of a VU: its HTTP version and whether its
// answers are read whole.
type transportKey struct {
	mode  string
	whole bool
}

// maxIdlePerHost bounds the idle connections a VU keeps per host.
const maxIdlePerHost = 1024

// requestWriteBuffer and responseReadBuffer size a client's connections'
// buffers (net/http's default is 4 KiB each); wholeReadBuffer is the read
// buffer of the connections whose answers are read whole.
const (
	requestWriteBuffer = 1 << 10
	responseReadBuffer = 2 << 10
	wholeReadBuffer    = 4 << 10
)

// closeIdle closes the idle connections of every transport made so far.
func (t *Transports) CloseIdle() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closeIdleLocked()
}

// closeIdleLocked is CloseIdle with t.mu held.
func (t *Transports) closeIdleLocked() {
	for _, rt := range t.byMode {
		if ht, ok := rt.(*http.Transport); ok {
			ht.CloseIdleConnections()
		}
	}
}

// NewIteration closes the idle connections of the VU's transports when a
// call is the first of a new iteration and k6's noVUConnectionReuse is set:
// k6 closes its own transport's after every iteration, and these clones'
// connections are the VU's too, so an iteration's calls dial anew, as its
// http.post would. On the event loop (k6 moves the iteration count there),
// where the calls of the iteration before have all ended.
func (t *Transports) NewIteration(st *lib.State) {
	if !st.Options.NoVUConnectionReuse.Bool {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if st.Iteration == t.iteration {
		return
	}
	t.iteration = st.Iteration
	t.closeIdleLocked()
}

// get is the VU's transport for an HTTP version, for streamed calls; base
// and dialer are k6's transport and the dialer under it.
func (t *Transports) get(base http.RoundTripper, dialer lib.DialContexter, mode string) http.RoundTripper {
	return t.transport(base, dialer, transportKey{mode: mode})
}

// getWhole is get for calls whose answer is read whole (embed, rerank).
// Their connections read with net/http's (and k6's) 4 KiB buffer, not the
// streams' 2 KiB: an answer a little over 2 KiB (llm-sim's 1024-dimension
// vector, most answers of a few vectors) then comes in one read, where the
// smaller buffer took two, and a read that found nothing parked its
// goroutine: about three system calls more per call (strace -c). Their own
// pool keeps the streams' connections at the smaller buffer, their memory
// the same at thousands of streams.
func (t *Transports) getWhole(base http.RoundTripper, dialer lib.DialContexter, mode string) http.RoundTripper {
	return t.transport(base, dialer, transportKey{mode: mode, whole: true})
}

func (t *Transports) transport(base http.RoundTripper, dialer lib.DialContexter, key transportKey) http.RoundTripper {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.base != base { // a new VU state (k6 hands a VU one transport for its life)
		t.base, t.byMode = base, map[transportKey]http.RoundTripper{}
	}
	if rt, ok := t.byMode[key]; ok {
		return rt
	}
	rt := withHTTPVersion(base, dialer, key.mode)
	if ht, ok := rt.(*http.Transport); ok && key.whole {
		ht.ReadBufferSize = wholeReadBuffer
	}
	t.byMode[key] = rt
	return rt
}

// withHTTPVersion clones k6's transport for an HTTP version. A transport that
// is not an *http.Transport (a test's) is used as it is, for 'auto' only.
// Under k6's transport is k6's dialer (dialer), whose connects then wait in
// their system call (connectInSyscall).
func withHTTPVersion(base http.RoundTripper, dialer lib.DialContexter, mode string) http.RoundTripper {
	ht, ok := base.(*http.Transport)
	if !ok {
		if mode == config.HTTPAuto {
			return base
		}
		return failingTransport{fmt.Errorf("http: '%s' needs k6's own HTTP transport", mode)}
	}
	t := ht.Clone()
	if dial := t.DialContext; dial != nil {
		if kd, ok := dialer.(*netext.Dialer); ok {
			dial = connectInSyscall(kd)
		}
		t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			start := time.Now()
			c, err := dial(ctx, network, addr)
			stream.ReportSetUp(ctx, time.Since(start))
			if err != nil {
				return c, err
			}
			return stampReceives(c), nil
		}
	}
	if !t.DisableKeepAlives {
		t.MaxIdleConns, t.MaxIdleConnsPerHost = 0, maxIdlePerHost
	}
	// A request is one small write (headers and a JSON body) while the
	// connection lives as long as its stream: a 1 KiB write buffer instead of
	// the default 4 KiB is 3 KiB less per stream in flight, for at most a few
	// more write calls on a long prompt.
	t.WriteBufferSize = requestWriteBuffer
	// Reads of the stream are larger than the read buffer and bypass it (the
	// event scanner asks for 4 KiB at a time); it serves only the status line,
	// headers and chunk sizes, and long header lines still read whole.
	t.ReadBufferSize = responseReadBuffer
	// Over HTTP/2 a request that finds its connection at the server's stream
	// limit gets another connection (its call's connect is then not zero)
	// rather than waiting for a stream: a send wait on a reused connection is
	// then this process's alone (result.sendWait, judged as ttftLate).
	h2 := http.HTTP2Config{}
	if t.HTTP2 != nil {
		h2 = *t.HTTP2
	}
	h2.StrictMaxConcurrentRequests = false
	t.HTTP2 = &h2
	switch mode {
	case config.HTTP1:
		p := new(http.Protocols)
		p.SetHTTP1(true)
		t.Protocols = p
		// k6's transport, once used, offers "h2" by ALPN, and the clone keeps
		// its TLS config: an HTTPS server speaking both would pick HTTP/2 for
		// a connection this transport then reads as HTTP/1.1.
		if t.TLSClientConfig != nil {
			t.TLSClientConfig.NextProtos = slices.DeleteFunc(slices.Clone(t.TLSClientConfig.NextProtos),
				func(p string) bool { return p == "h2" })
		}
		t.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{} // as k6 does for HTTP/1.1 only
	case config.HTTP2:
		p := new(http.Protocols)
		p.SetHTTP2(true)
		p.SetUnencryptedHTTP2(true) // h2c with prior knowledge for http:// URLs
		t.Protocols = p
	}
	return t
}

// stampReceives has the kernel stamp the packets of a connection k6's dialer
// made (under k6's byte counting, which then counts the stamped reads), so an
// event's arrival is when its bytes reached the machine, not when the
// goroutine reading them got a CPU: under load the difference is the client's
// own lag, which would otherwise land in every TTFT and gap.
func stampReceives(c net.Conn) net.Conn {
	if nc, ok := c.(*netext.Conn); ok {
		nc.Conn = rxstamp.Wrap(nc.Conn)
		return nc
	}
	return rxstamp.Wrap(c)
}

// connectInSyscall dials as k6's dialer d does (its hosts, blocked addresses
// and resolver, its byte counts), with the connect waiting in its system call
// while a slot is free (package connect): at the start of a test, when every
// VU runs at once, a connect waiting in Go's poller is seen milliseconds
// after the handshake, and the wait lands in the call's TTFT.
func connectInSyscall(d *netext.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	// A copy of k6's dialer with the net.Dialer changed: its DialContext then
	// does what k6's does, but counts bytes into the copy, so the connection
	// is pointed back at d's counts, which k6 reads.
	waiting := &netext.Dialer{
		Dialer: connect.InSyscall(d.Dialer), Resolver: d.Resolver,
		Blacklist: d.Blacklist, BlockedHostnames: d.BlockedHostnames, Hosts: d.Hosts,
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		release, ok := connect.Acquire()
		if !ok {
			return d.DialContext(ctx, network, addr)
		}
		c, err := waiting.DialContext(ctx, network, addr)
		release()
		if err != nil {
			return nil, err
		}
		nc, ok := c.(*netext.Conn)
		if !ok {
			_ = c.Close()
			return nil, fmt.Errorf("k6's dialer returned a %T", c)
		}
		nc.BytesRead, nc.BytesWritten = &d.BytesRead, &d.BytesWritten
		if err := connect.Done(nc.Conn); err != nil {
			_ = nc.Close()
			return nil, err
		}
		return nc, nil
	}
}

// arrivalClock finds the stamping connection under the one a request got
// (TLS, then k6's byte counting), or nil when it has none.
func arrivalClock(c net.Conn) stream.ArrivalClock {
	for range 3 {
		switch t := c.(type) {
		case *rxstamp.Conn:
			return t
		case *tls.Conn:
			c = t.NetConn()
		case *netext.Conn:
			c = t.Conn
		default:
			return nil
		}
	}
	return nil
}

// failingTransport fails every request with a message naming the cause.
type failingTransport struct{ err error }

func (f failingTransport) RoundTrip(*http.Request) (*http.Response, error) { return nil, f.err }
