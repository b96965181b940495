package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// lockedBuffer is written by run's goroutine and read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// start runs llm-sim with args until the test ends; it returns the base URL
// from the "listening" line.
func start(t *testing.T, args ...string) (string, func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	stderr := &lockedBuffer{}
	codec := make(chan int, 1)
	go func() {
		codec <- run(ctx, append([]string{"--addr", "127.0.0.1:0"}, args...), pw, stderr)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	require.NoError(t, err, stderr.String())
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "llm-sim listening on ")
	require.True(t, ok, line)
	assert.NotContains(t, url, ":0", "the real port is printed")
	stopped := false
	stop := func() int {
		if stopped {
			return 0
		}
		stopped = true
		cancel()
		select {
		case code := <-codec:
			return code
		case <-time.After(10 * time.Second):
			t.Fatal("llm-sim did not stop")
			return -1
		}
	}
	t.Cleanup(func() { stop() })
	return url, stop
}

func chat(t *testing.T, c *http.Client, url, body string) (int, string) {
	t.Helper()
	resp, err := c.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

func TestRunServesAndStops(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.jsonl")
	url, stop := start(t, "--model", "sim-large=demo", "--model", "sim-small=fast", "--seed", "1", "--trace", trace)
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()

	resp, err := c.Get(url + "/v1/models")
	require.NoError(t, err)
	var models struct {
		Data []struct{ ID string } `json:"data"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&models))
	resp.Body.Close()
	require.Len(t, models.Data, 2)
	assert.Equal(t, "sim-large", models.Data[0].ID)

	code, body := chat(t, c, url, `{"model":"sim-small","messages":[{"role":"user","content":"hi"}],"max_tokens":3}`)
	assert.Equal(t, 200, code, body)
	assert.Contains(t, body, `"model":"sim-small"`)
	code, body = chat(t, c, url, `{"messages":[{"role":"user","content":"hi"}],"max_tokens":2}`)
	assert.Equal(t, 200, code, body)
	assert.Contains(t, body, `"model":"sim-large"`, "the first model is the default")

	c.CloseIdleConnections()
	assert.Equal(t, 0, stop(), "a clean exit on the signal")
	data, err := os.ReadFile(trace)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	require.Len(t, lines, 2)
	var rec map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &rec))
	for _, k := range []string{"request_id", "model", "arrival_ns", "admitted_ns", "prefill_start_ns", "prefill_end_ns",
		"first_token_ns", "chunks_ns", "done_ns", "prompt_tokens", "cached_tokens", "completion_tokens", "outcome", "fault"} {
		assert.Contains(t, rec, k)
	}
}

func TestRunConfigSetAndFault(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "sim.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("seed: 3\nmodels:\n  - name: cfg-model\n    profile: fast\n"), 0o600))
	url, _ := start(t, "--config", cfg, "--set", "default_max_tokens=4", "--fault", "status=503:1")
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	code, _ := chat(t, c, url, `{"messages":[{"role":"user","content":"hi"}]}`)
	assert.Equal(t, 503, code, "--fault applies to every model")
	req, err := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", strings.NewReader(`{"messages":[{"role":"user","content":"hi"}]}`))
	require.NoError(t, err)
	req.Header.Set("X-Sim-Fault", "none")
	resp, err := c.Do(req)
	require.NoError(t, err)
	var out struct {
		Model string
		Usage struct {
			Completion int `json:"completion_tokens"`
		}
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	resp.Body.Close()
	assert.Equal(t, "cfg-model", out.Model)
	assert.Equal(t, 4, out.Usage.Completion, "--set default_max_tokens")
}

func TestRunFlagsAndHelp(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.Equal(t, 0, run(context.Background(), []string{"--help"}, &out, &errOut))
	help := errOut.String()
	for _, want := range []string{"--addr", "--profile", "--model", "--trace", "--config", "--set", "--fault",
		"decode_per_seq_ms", "(ms/sequence)", "X-Sim-Fault", "stall=MS@K", "different machines"} {
		assert.Contains(t, strings.ReplaceAll(help, "  -", "  --"), want)
	}
	for _, bad := range [][]string{
		{"--nope"}, {"--profile", "huge"}, {"--model", "x=huge"}, {"--set", "nope=1"}, {"--set", "max_num_seqs"},
		{"--fault", "boom:0.5"}, {"--fault", "html"}, {"--config", "/does/not/exist.yaml"}, {"extra"},
		{"--set", "max_num_seqs=0"},
	} {
		errOut.Reset()
		assert.Equal(t, 2, run(context.Background(), bad, &out, &errOut), "%v", bad)
		assert.NotEmpty(t, errOut.String(), "%v", bad)
	}
	out.Reset()
	assert.Equal(t, 0, run(context.Background(), []string{"--list-profiles"}, &out, &errOut))
	var profiles map[string]map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &profiles), out.String())
	assert.Contains(t, profiles, "demo")
	assert.InDelta(t, 16.0, profiles["demo"]["max_num_seqs"], 0)
}

func TestRunAddressInUse(t *testing.T) {
	url, _ := start(t)
	var out, errOut bytes.Buffer
	addr := strings.TrimPrefix(url, "http://")
	assert.Equal(t, 1, run(context.Background(), []string{"--addr", addr}, &out, &errOut))
	assert.Contains(t, errOut.String(), "address already in use")
}

// streamOver reads a whole streamed answer over c and checks it ends with
// [DONE] and the Server-Timing trailer; it returns the protocol spoken.
func streamOver(t *testing.T, c *http.Client, url string) string {
	t.Helper()
	resp, err := c.Post(url+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"messages":[{"role":"user","content":"hi"}],"max_tokens":20,"stream":true}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, 20, strings.Count(string(body), `"content":"`)-1, "20 tokens after the role chunk")
	assert.True(t, strings.HasSuffix(strings.TrimSpace(string(body)), "data: [DONE]"), "the stream ends with [DONE]")
	assert.Contains(t, resp.Trailer.Get("Server-Timing"), "total;dur=", "the trailer arrives")
	return resp.Proto
}

func TestRunServesHTTP2OverTLSAndH2C(t *testing.T) {
	tlsURL, _ := start(t, "--tls", "--model", "m=fast")
	require.True(t, strings.HasPrefix(tlsURL, "https://"), tlsURL)
	h2 := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: true} //nolint:gosec // self-signed test server
	defer h2.CloseIdleConnections()
	assert.Equal(t, "HTTP/2.0", streamOver(t, &http.Client{Transport: h2}, tlsURL))
	h1 := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // self-signed test server
	defer h1.CloseIdleConnections()
	h1.Protocols = new(http.Protocols)
	h1.Protocols.SetHTTP1(true)
	assert.Equal(t, "HTTP/1.1", streamOver(t, &http.Client{Transport: h1}, tlsURL))

	clearURL, _ := start(t, "--model", "m=fast")
	require.True(t, strings.HasPrefix(clearURL, "http://"), clearURL)
	var h2cDials, plainDials dialCounter
	h2c := &http.Transport{Protocols: new(http.Protocols), DialContext: h2cDials.dial}
	h2c.Protocols.SetUnencryptedHTTP2(true)
	defer h2c.CloseIdleConnections()
	assert.Equal(t, "HTTP/2.0", streamOver(t, &http.Client{Transport: h2c}, clearURL))
	plain := &http.Transport{DialContext: plainDials.dial}
	defer plain.CloseIdleConnections()
	assert.Equal(t, "HTTP/1.1", streamOver(t, &http.Client{Transport: plain}, clearURL))

	// Two streams over one h2c connection, then the counter in /metrics: it
	// counts every connection the clients opened. (Go's HTTP/1.1 transport
	// may close a connection instead of reusing it when its writer was slow
	// to report, so the plain client's count is whatever it dialed.)
	assert.Equal(t, "HTTP/2.0", streamOver(t, &http.Client{Transport: h2c}, clearURL))
	assert.Equal(t, int64(1), h2cDials.n.Load(), "h2c streams share their connection")
	resp, err := plain.RoundTrip(mustGet(t, clearURL+"/metrics"))
	require.NoError(t, err)
	m, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Contains(t, string(m), fmt.Sprintf("llmsim_connections_accepted_total %d\n", h2cDials.n.Load()+plainDials.n.Load()),
		"every connection the clients opened is counted")

	offURL, _ := start(t, "--tls", "--http2=false", "--model", "m=fast")
	off := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: true} //nolint:gosec // self-signed test server
	defer off.CloseIdleConnections()
	assert.Equal(t, "HTTP/1.1", streamOver(t, &http.Client{Transport: off}, offURL), "--http2=false")
}

// dialCounter counts the connections a transport opens.
type dialCounter struct{ n atomic.Int64 }

func (d *dialCounter) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.n.Add(1)
	var nd net.Dialer
	return nd.DialContext(ctx, network, addr)
}

func mustGet(t *testing.T, url string) *http.Request {
	t.Helper()
	r, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	return r
}

func TestRunTLSFlagErrors(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--tls", "--tls-cert", "c.pem", "--tls-key", "k.pem"},
		{"--tls-cert", filepath.Join(dir, "c.pem")},
		{"--tls-cert", filepath.Join(dir, "c.pem"), "--tls-key", filepath.Join(dir, "k.pem")},
	} {
		var out, errOut bytes.Buffer
		assert.Equal(t, 2, run(context.Background(), append([]string{"--addr", "127.0.0.1:0"}, args...), &out, &errOut), "%v", args)
		assert.Contains(t, errOut.String(), "--tls", "%v: the message names the flag", args)
	}
}
