package calls

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.k6.io/k6/lib"
	"go.k6.io/k6/lib/netext"
	"go.k6.io/k6/lib/types"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/connect"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// A connection k6's dialer made is stamped under k6's byte counting, and the
// call finds the stamps through TLS and the counting wrapper.
func TestConnectionsFromK6sDialerAreStamped(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(answer))
	t.Cleanup(srv.Close)
	c, err := k6Dialer().DialContext(context.Background(), "tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	c = stampReceives(c)
	_, counted := c.(*netext.Conn)
	require.True(t, counted, "k6's byte counting is kept")
	if runtime.GOOS != "linux" {
		require.Nil(t, arrivalClock(c), "receive stamps are read on Linux only")
		return
	}
	require.NotNil(t, arrivalClock(c))
	require.NotNil(t, arrivalClock(tls.Client(c, &tls.Config{})), "under TLS") //nolint:gosec // never handshakes
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	require.Nil(t, arrivalClock(stampReceives(a)), "a connection that is not TCP")
}

// A dial whose connect waits in its system call is still k6's dial: its hosts
// and blocked addresses hold, its bytes are counted where k6 reads them, and
// the connection it returns is nonblocking, as Go's reads expect.
func TestConnectInSyscallIsK6sDial(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(answer))
	t.Cleanup(srv.Close)
	host, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	require.NoError(t, err)
	to, err := types.NewHost(net.ParseIP(host), port)
	require.NoError(t, err)

	kd := k6Dialer()
	kd.Hosts, err = types.NewHosts(map[string]types.Host{"llm.test": *to})
	require.NoError(t, err)
	kd.BlockedHostnames, err = types.NewHostnameTrie([]string{"*.blocked.test"})
	require.NoError(t, err)
	dial := connectInSyscall(kd)

	c, err := dial(context.Background(), "tcp", "llm.test:80")
	require.NoError(t, err, "k6's hosts option maps the name")
	nc, ok := c.(*netext.Conn)
	require.True(t, ok, "k6's byte counting is kept")
	blocking, err := connect.Blocking(nc.Conn.(syscall.Conn)) //nolint:forcetypeassert // under k6's counting, the TCP connection
	require.NoError(t, err)
	require.False(t, blocking, "the socket is nonblocking once dialed")
	_, err = fmt.Fprint(c, "GET / HTTP/1.1\r\nHost: llm.test\r\nConnection: close\r\n\r\n")
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	body, err := io.ReadAll(c)
	require.NoError(t, err)
	require.NoError(t, c.Close())
	require.Contains(t, string(body), "[DONE]")
	require.EqualValues(t, len(body), atomic.LoadInt64(&kd.BytesRead), "counted into the VU's dialer, which k6 reads")
	require.Positive(t, atomic.LoadInt64(&kd.BytesWritten))

	_, err = dial(context.Background(), "tcp", "api.blocked.test:443")
	var blocked netext.BlockedHostError
	require.ErrorAs(t, err, &blocked)

	kd.Blacklist = []*lib.IPNet{mustCIDR(t, "127.0.0.0/8")}
	_, err = connectInSyscall(kd)(context.Background(), "tcp", srv.Listener.Addr().String())
	var blacklisted netext.BlackListedIPError
	require.ErrorAs(t, err, &blacklisted)
}

// connectInSyscall copies k6's dialer field by field: a k6 release that adds
// one must be looked at (and copied, or not, on purpose).
func TestConnectInSyscallCopiesEveryDialerField(t *testing.T) {
	t.Parallel()
	var fields []string
	for f := range reflect.TypeFor[netext.Dialer]().Fields() {
		fields = append(fields, f.Name)
	}
	require.Equal(t, []string{
		"Dialer", "Resolver", "Blacklist", "BlockedHostnames", "Hosts", // copied
		"BytesRead", "BytesWritten", // the connection counts into k6's own
	}, fields)
}

func mustCIDR(t *testing.T, s string) *lib.IPNet {
	t.Helper()
	n, err := lib.ParseCIDR(s)
	require.NoError(t, err)
	return n
}

// A transport's dial reports how long it took itself to the request it dialed
// for, so that the wait of Go's dialing goroutine counts in the send wait.
func TestDialReportsItsOwnTime(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(answer))
	t.Cleanup(srv.Close)
	kd := k6Dialer()
	tr, ok := withHTTPVersion(&http.Transport{DialContext: kd.DialContext}, kd, config.HTTPAuto).(*http.Transport)
	require.True(t, ok)
	var took time.Duration
	ctx := stream.WithSetUpTimer(context.Background(), stream.SetUpFunc(func(d time.Duration) { took += d }))
	c, err := tr.DialContext(ctx, "tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	require.NoError(t, c.Close())
	require.Positive(t, took)
	c, err = tr.DialContext(context.Background(), "tcp", srv.Listener.Addr().String())
	require.NoError(t, err, "a context without a timer dials as well")
	require.NoError(t, c.Close())
}

// answer is the end of a chat stream: these tests read a body back through
// the dialer, not an answer's figures.
func answer(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = fmt.Fprint(w, "data: [DONE]\n\n")
}

// k6Dialer is the dialer k6 gives its transport.
func k6Dialer() *netext.Dialer {
	return netext.NewDialer(net.Dialer{}, netext.NewResolver(net.LookupIP, 0, types.DNSfirst, types.DNSpreferIPv4))
}
