package llmstream

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	"go.k6.io/k6/lib"
	"go.k6.io/k6/lib/netext/httpext"
	"gopkg.in/guregu/null.v3"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/protocol"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// errorBodyLimit bounds how much of an error response is read for its message.
const errorBodyLimit = 64 << 10

// attempt is one HTTP exchange and the stream read from it.
type attempt struct {
	client  *Client
	cfg     stream.Config
	call    *stream.Call
	wd      *stream.Watchdog
	status  int
	header  http.Header
	resp    *http.Response
	res     *stream.Result
	connect time.Duration
	// reconnects is how many times a raw event stream was reopened.
	reconnects int
}

func (c *Client) attempt(parent context.Context, st *lib.State, plan *callPlan, resume *stream.Call) *attempt {
	to := plan.params.Timeouts
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	ctx, cancelTotal := context.WithTimeoutCause(ctx, to.Total, stream.CauseFor(stream.ErrTimeoutTotal))
	defer cancelTotal()

	a := &attempt{client: c, wd: stream.NewWatchdog(to, cancel), call: resume}
	defer a.wd.Stop()
	a.cfg = stream.Config{
		Spec: c.opts.Protocol, MaxEventSize: c.opts.MaxEventSize, MaxBodySize: c.opts.MaxBodySize,
		StallThreshold: c.opts.StallThreshold, CountTokens: c.count, OnEvent: plan.onEvent, Watchdog: a.wd,
		KeepGaps: plan.params.Gaps || c.opts.GapSamples == config.GapsPerEvent,
	}
	ctx = httptrace.WithClientTrace(ctx, a.trace())

	u, err := httpext.NewURL(plan.url, c.name())
	if err != nil {
		return a.failed(stream.ErrNetwork, "invalid URL: "+err.Error())
	}
	req, err := http.NewRequestWithContext(ctx, plan.method, plan.url, nil)
	if err != nil {
		return a.failed(stream.ErrNetwork, "invalid request: "+err.Error())
	}
	req.Header = plan.header.Clone()
	if resume != nil {
		resume.SetWatchdog(a.wd)
		req.Header.Set("Last-Event-ID", resume.LastEventID())
	}

	vuState := *st // a shallow copy: only the transport and the debug option differ
	vuState.Transport = tapTransport{base: st.Transport, a: a, debug: st.Options.HTTPDebug.String, log: st.Logger}
	// k6's own --http-debug dump would print the API key; ours redacts it.
	vuState.Options.HTTPDebug = null.String{}
	tm := plan.tags.Clone()
	if c.opts.Name != "" {
		tm.SetTag("name", c.opts.Name)
	}
	_, err = httpext.MakeRequest(ctx, &vuState, &httpext.ParsedHTTPRequest{
		URL: &u, Req: req, Body: requestPayload(plan.payload),
		// The request's own deadline is the total timeout plus a margin: ours
		// fires first, with a cause that classifies it.
		Timeout:      to.Total + time.Second,
		Throw:        true,
		ResponseType: httpext.ResponseTypeNone,
		Redirects:    maxRedirects(st),
		TagsAndMeta:  tm,
		ResponseCallback: func(status int) bool {
			return status >= 200 && status < 400
		},
	})
	if a.call == nil {
		a.call = stream.NewCall(a.cfg, time.Now())
	}
	if err != nil {
		cause := context.Cause(ctx)
		if parent.Err() != nil {
			cause = parent.Err()
		}
		typ := stream.Classify(err, cause)
		msg := err.Error()
		if stream.IsTLS(err) {
			msg = "TLS: " + msg
		}
		a.call.Fail(typ, msg)
	}
	a.res = a.call.Finish()
	a.res.Starved = a.wd.Starved()
	if a.resp != nil {
		a.res.ServerTimings = mergeTimings(a.res.ServerTimings, a.resp.Header)
		a.res.ServerTimings = mergeTimings(a.res.ServerTimings, a.resp.Trailer)
		if a.res.RequestID == "" {
			a.res.RequestID = requestID(a.resp.Header)
		}
	}
	return a
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

func (a *attempt) failed(t stream.ErrorType, msg string) *attempt {
	a.call = stream.NewCall(a.cfg, time.Now())
	a.call.Fail(t, msg)
	a.res = a.call.Finish()
	return a
}

// trace enforces the connect timeout and measures connection set-up.
func (a *attempt) trace() *httptrace.ClientTrace {
	var start time.Time
	return &httptrace.ClientTrace{
		GetConn: func(string) {
			start = time.Now()
			a.wd.ConnectStart()
		},
		GotConn: func(info httptrace.GotConnInfo) {
			a.wd.ConnectDone()
			if !info.Reused && !start.IsZero() {
				a.connect = time.Since(start)
			}
		},
	}
}

// tapTransport sits under k6's own tracing transport: k6 still measures and
// emits http_req_*, while the body is read and timed here.
type tapTransport struct {
	base  http.RoundTripper
	a     *attempt
	debug string // k6's --http-debug value: "", "headers" or "full"
	log   logrus.FieldLogger
}

func (t tapTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	a := t.a
	if a.call == nil {
		a.call = stream.NewCall(a.cfg, time.Now()) // t0: handed to the transport
		a.wd.Start()
	}
	if t.debug != "" && t.log != nil {
		t.log.WithField("source", "http-debug").Info(debugRequest(r, a.client, t.debug == "full"))
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if a.call.Headers.IsZero() {
		a.call.Headers = time.Now()
	}
	if t.debug != "" && t.log != nil {
		t.log.WithField("source", "http-debug").Info(debugResponse(resp, a.client))
	}
	a.status, a.header, a.resp = resp.StatusCode, resp.Header, resp
	a.wd.Bytes()
	if resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.Header.Get("Location") != "" {
		return resp, nil // k6 follows the redirect; the final response is read
	}
	resp.Body = &tapBody{a: a, body: resp.Body}
	return resp, nil
}

// tapBody reads the whole stream on k6's first Read: the parse runs in the
// goroutine that reads the socket, so arrival times are taken as bytes land.
type tapBody struct {
	a    *attempt
	body io.ReadCloser
	done bool
	err  error
}

func (b *tapBody) Read([]byte) (int, error) {
	if !b.done {
		b.done = true
		b.err = b.a.consume(b.body)
	}
	if b.err != nil {
		return 0, b.err
	}
	return 0, io.EOF
}

// Close reads what is left of a stream that ended cleanly before closing it.
// Parsing stops at the terminal event, but the body's last bytes (the chunked
// terminator, trailers such as Server-Timing) often arrive just after it, and
// an HTTP/1.1 connection whose body was not read to its end is not reused:
// over TLS every call would pay a new handshake. The drain is bounded in
// bytes and time, so a server that holds the body open costs at most drainWait.
func (b *tapBody) Close() error {
	if b.done && b.err == nil {
		stop := time.AfterFunc(drainWait, func() { _ = b.body.Close() })
		_, _ = io.Copy(io.Discard, io.LimitReader(b.body, drainLimit))
		stop.Stop()
	}
	return b.body.Close()
}

// drainLimit and drainWait bound what Close reads past the end of a stream.
const (
	drainLimit = 64 << 10
	drainWait  = 100 * time.Millisecond
)

// consume reads a response: error statuses and non-stream bodies are
// classified; streams are framed, decoded and timed.
func (a *attempt) consume(body io.Reader) error {
	call := a.call
	if a.status >= 400 {
		msg, err := io.ReadAll(io.LimitReader(body, errorBodyLimit))
		call.Fail(statusClass(a.status), fmt.Sprintf("HTTP %d: %s", a.status, stream.Excerpt(string(msg), 300)))
		return err
	}
	if ct := a.header.Get("Content-Type"); strings.HasPrefix(strings.ToLower(ct), "text/html") {
		msg, err := io.ReadAll(io.LimitReader(body, errorBodyLimit))
		call.Fail(stream.ErrDecode, fmt.Sprintf("expected a stream, got %s (HTTP %d): %s",
			ct, a.status, stream.Excerpt(string(msg), 200)))
		return err
	}
	return call.Consume(body)
}

func statusClass(status int) stream.ErrorType {
	switch {
	case status == http.StatusTooManyRequests:
		return stream.ErrHTTP429
	case status >= 500:
		return stream.ErrHTTP5xx
	default:
		return stream.ErrHTTP4xx
	}
}

func requestID(h http.Header) string {
	for _, k := range []string{"X-Request-Id", "Request-Id", "X-Amzn-Requestid"} {
		if v := h.Get(k); v != "" {
			return stream.Excerpt(v, 128)
		}
	}
	return ""
}

// retryAfter reads Retry-After (seconds or an HTTP date) and retry-after-ms.
func retryAfter(h http.Header) (time.Duration, bool) {
	return protocol.ParseRetryAfter(h, time.Now())
}

// mergeTimings adds the Server-Timing phases of headers or trailers (several
// field lines are one list) to what the stream itself reported.
func mergeTimings(m map[string]float64, h http.Header) map[string]float64 {
	v := strings.Join(h.Values("Server-Timing"), ", ")
	if v == "" {
		return m
	}
	for k, d := range protocol.ParseServerTiming(v) {
		if m == nil {
			m = map[string]float64{}
		}
		m[k] = d
	}
	return m
}
