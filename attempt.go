package llmstream

// One HTTP attempt: the request goes through k6's own client (httpext), so k6
// still measures and emits http_req_*; a tap transport under k6's tracing
// transport hands the response to the stream when its headers arrive, and the
// body to the stream on k6's first read, so events are timed in the goroutine
// that reads the socket. The stream finishes the attempt (stream.Call).

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
	"go.k6.io/k6/lib"
	"go.k6.io/k6/lib/netext/httpext"
	"go.k6.io/k6/metrics"
	"gopkg.in/guregu/null.v3"

	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// request is everything one attempt needs, prepared by the call plan.
type request struct {
	method    string
	url       string
	header    http.Header
	payload   []byte
	model     string
	name      string // the client's label: k6's URL name
	tags      metrics.TagsAndMeta
	timeouts  stream.Timeouts
	stream    stream.Config // without a watchdog: each attempt has its own
	redact    redactor
	transport *transports
	http      string // the client's HTTP version (config.HTTP…)
}

// try runs one attempt and returns its finished call. resume is the call of a
// raw event stream that broke, reopened with Last-Event-ID: it keeps its clock.
func (r *request) try(parent context.Context, st *lib.State, resume *stream.Call) (*stream.Call, *stream.Result) {
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	ctx, cancelTotal := context.WithTimeoutCause(ctx, r.timeouts.Total, stream.CauseFor(stream.ErrTimeoutTotal))
	defer cancelTotal()

	wd := stream.NewWatchdog(r.timeouts, cancel)
	defer wd.Stop()
	call := resume
	if call == nil {
		cfg := r.stream
		cfg.Watchdog = wd
		call = stream.NewCall(cfg, time.Time{}) // t0 is set when the transport gets the request
	} else {
		call.Reopen()
		call.SetWatchdog(wd)
	}
	var tlsStart atomic.Int64
	ctx = withSetUpTimer(ctx, call.SetUp) // the transport's dial (transport.go) reports its own time
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		// The handshake's own time, on the transport's dialing goroutine:
		// with the dial's, what of the connect is not this process's wait.
		TLSHandshakeStart: func() { tlsStart.Store(time.Now().UnixNano()) },
		TLSHandshakeDone: func(tls.ConnectionState, error) {
			if t0 := tlsStart.Swap(0); t0 != 0 {
				call.SetUp(time.Duration(time.Now().UnixNano() - t0))
			}
		},
		GetConn: func(string) { wd.ConnectStart() },
		GotConn: func(info httptrace.GotConnInfo) {
			wd.ConnectDone(info.Reused)
			call.SetArrivalClock(arrivalClock(info.Conn))
		},
		// The transport's writing goroutine begins the request: how long
		// after t0 is this process's wait to send it (Result.SendWait).
		WroteHeaders: func() { call.Sent(time.Now()) },
	})

	u, err := httpext.NewURL(r.url, r.name)
	if err != nil {
		call.Fail(stream.ErrNetwork, "invalid URL: "+err.Error())
		return call, call.Finish()
	}
	req, err := http.NewRequestWithContext(ctx, r.method, r.url, nil)
	if err != nil {
		call.Fail(stream.ErrNetwork, "invalid request: "+err.Error())
		return call, call.Finish()
	}
	req.Header = r.header.Clone()
	if resume != nil {
		req.Header.Set("Last-Event-ID", resume.LastEventID())
	}

	vuState := *st // a shallow copy: only the transport and the debug option differ
	vuState.Transport = tapTransport{
		base: r.transport.get(st.Transport, st.Dialer, r.http), call: call, wd: wd, debug: st.Options.HTTPDebug.String, log: st.Logger, redact: r.redact,
	}
	// k6's own --http-debug dump would print the API key; ours redacts it.
	vuState.Options.HTTPDebug = null.String{}
	_, err = httpext.MakeRequest(ctx, &vuState, &httpext.ParsedHTTPRequest{
		URL: &u, Req: req, Body: requestPayload(r.payload),
		// The request's own deadline is the total timeout plus a margin: ours
		// fires first, with a cause that classifies it.
		Timeout:      r.timeouts.Total + time.Second,
		Throw:        true,
		ResponseType: httpext.ResponseTypeNone,
		Redirects:    maxRedirects(st),
		TagsAndMeta:  r.tags,
		ResponseCallback: func(status int) bool {
			return status >= 200 && status < 400
		},
	})
	if err != nil {
		cause := context.Cause(ctx)
		if parent.Err() != nil {
			cause = parent.Err()
		}
		msg := err.Error()
		if stream.IsTLS(err) {
			msg = "TLS: " + msg
		}
		call.Fail(stream.Classify(err, cause), msg)
	}
	return call, call.Finish()
}

// maxRedirects is k6's maxRedirects option, with k6's default when unset.
func maxRedirects(st *lib.State) null.Int {
	if st.Options.MaxRedirects.Valid {
		return st.Options.MaxRedirects
	}
	return null.IntFrom(10)
}

func requestPayload(p []byte) *bytes.Buffer {
	if p == nil {
		return nil
	}
	return bytes.NewBuffer(p)
}

// tapTransport sits under k6's own tracing transport: k6 still measures and
// emits http_req_*, while the body is read and timed by the stream.
type tapTransport struct {
	base   http.RoundTripper
	call   *stream.Call
	wd     *stream.Watchdog
	debug  string // k6's --http-debug value: "", "headers" or "full"
	log    logrus.FieldLogger
	redact redactor
}

func (t tapTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if t.call.Start.IsZero() {
		t.call.Begin(time.Now()) // t0: handed to the transport
		t.wd.Start()
	}
	if t.debug != "" && t.log != nil {
		t.log.WithField("source", "http-debug").Info(t.redact.dumpRequest(r, t.debug == "full"))
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	t.call.Respond(resp, time.Now())
	if t.debug != "" && t.log != nil {
		t.log.WithField("source", "http-debug").Info(t.redact.dumpResponse(resp))
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.Header.Get("Location") != "" {
		return resp, nil // k6 follows the redirect; the final response is read
	}
	resp.Body = &tapBody{call: t.call, body: resp.Body}
	return resp, nil
}

// tapBody reads the whole stream on k6's first Read: the parse runs in the
// goroutine that reads the socket, so arrival times are taken as bytes land.
type tapBody struct {
	call *stream.Call
	body io.ReadCloser
	done bool
	err  error
}

func (b *tapBody) Read([]byte) (int, error) {
	if !b.done {
		b.done = true
		b.err = b.call.Read(b.body)
	}
	if b.err != nil {
		return 0, b.err
	}
	return 0, io.EOF
}

// WriteTo is the same read for io.Copy, which k6 drains the body with: with
// it, io.Copy hands the body over instead of lending an 8 KiB buffer that
// would be held for the whole life of the stream.
func (b *tapBody) WriteTo(io.Writer) (int64, error) {
	if _, err := b.Read(nil); err != io.EOF { //nolint:errorlint // Read returns io.EOF itself
		return 0, err
	}
	return 0, nil
}

func (b *tapBody) Close() error { return b.body.Close() }
