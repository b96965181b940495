package stream

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/protocol"
)

// The response side of an attempt: the call is handed the HTTP response once,
// when its headers arrive; it classifies error statuses and HTML error pages,
// reads the stream, then drains the body to EOF within a small bound so the
// trailers arrive and the connection goes back to the pool.

// errorBodyLimit bounds how much of an error response is read for its message.
const errorBodyLimit = 64 << 10

// Defaults of the bounded drain after the end of the stream: enough for the
// chunked terminator and trailers of any server we know, short enough that a
// server that keeps the body open after its terminal event costs little.
const (
	DefaultDrainBytes = 64 << 10
	DefaultDrainTime  = time.Second
)

// Respond hands the call the HTTP response whose headers just arrived (once per
// response: a redirect is followed by the next one). The first response's
// arrival is the call's TTFB; the last one is the one whose body is read.
// at is the clock when the headers were handed over (now).
func (c *Call) Respond(resp *http.Response, at time.Time) {
	if c.Headers.IsZero() {
		c.Headers = at
		if c.clock != nil {
			c.Headers = latest(c.clock.Arrival(at), c.Start) // never before the request
		}
	}
	c.resp = resp
	if w := c.cfg.Watchdog; w != nil {
		w.BytesAt(at)
	}
}

// Read reads the body of the response given to Respond: an error status, an
// HTML page or a compressed body (encoding.go) is a classified failure, the
// first two carrying an excerpt of the body; anything else is read as the
// stream. It returns the read error, if any, for the caller
// to classify (only it knows the call's context).
func (c *Call) Read(body io.Reader) error {
	if c.resp == nil {
		return c.Consume(body)
	}
	status := c.resp.StatusCode
	if status >= 400 {
		msg, err := io.ReadAll(io.LimitReader(body, errorBodyLimit))
		c.Fail(StatusClass(status), fmt.Sprintf("HTTP %d: %s", status, Excerpt(string(msg), 300)))
		if err == nil {
			c.drain(body)
		}
		return err
	}
	if ct := c.resp.Header.Get("Content-Type"); strings.HasPrefix(strings.ToLower(ct), "text/html") {
		msg, err := io.ReadAll(io.LimitReader(body, errorBodyLimit))
		c.Fail(ErrDecode, fmt.Sprintf("expected a stream, got %s (HTTP %d): %s", ct, status, Excerpt(string(msg), 200)))
		if err == nil {
			c.drain(body)
		}
		return err
	}
	if ce := UnaskedEncoding(c.resp.Header); ce != "" {
		c.Fail(ErrDecode, UnaskedEncodingMessage(ce, status))
		c.drain(body)
		return nil
	}
	err := c.Consume(body)
	if err == nil && !c.reader.eof {
		c.drain(body)
	}
	return err
}

// StatusClass is the error class of an HTTP error status.
func StatusClass(status int) ErrorType {
	switch {
	case status == http.StatusTooManyRequests:
		return ErrHTTP429
	case status >= 500:
		return ErrHTTP5xx
	default:
		return ErrHTTP4xx
	}
}

// drain reads what is left of the body after the stream ended (the chunked
// terminator and the trailers, typically a few bytes), at most DrainBytes and
// DrainTime: Go fills resp.Trailer only at EOF, and returns a connection to its
// pool only when the body was read to EOF. It reads the raw body, after the
// call's end was taken: none of it is timed.
func (c *Call) drain(body io.Reader) {
	limit, d := c.cfg.DrainBytes, c.cfg.DrainTime
	if limit <= 0 {
		limit = DefaultDrainBytes
	}
	if d <= 0 {
		d = DefaultDrainTime
	}
	if w := c.cfg.Watchdog; w != nil {
		w.CutOff(d)
		defer w.EndCutOff()
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(body, limit))
}

// fromResponse folds what the response's headers and trailers say into r:
// Server-Timing phases (events first, then headers, then trailers, the later
// winning), the request id when no event carried one, and the server's
// Retry-After.
func (c *Call) fromResponse(r *Result, now time.Time) {
	resp := c.resp
	if resp == nil {
		return
	}
	r.Status, r.Proto = resp.StatusCode, resp.Proto
	r.ServerTimings = mergeTimings(r.ServerTimings, resp.Header)
	r.ServerTimings = mergeTimings(r.ServerTimings, resp.Trailer)
	if r.RequestID == "" {
		r.RequestID = requestID(resp.Header)
	}
	if d, ok := protocol.ParseRetryAfter(resp.Header, now); ok {
		r.RetryAfter = measure.Of(d)
	}
}

// requestIDHeaders name the request id in the responses of the providers
// we know, in their canonical form: a response's header keys are (net/http
// reads them so), and Header.Get would only canonicalize each name again,
// at every call, to find the same entry.
var requestIDHeaders = [...]string{"X-Request-Id", "Request-Id", "X-Amzn-Requestid"} //nolint:gochecknoglobals // read-only table

func requestID(h http.Header) string {
	for _, k := range requestIDHeaders {
		if v := h[k]; len(v) > 0 && v[0] != "" {
			return Excerpt(v[0], 128)
		}
	}
	return ""
}

// serverTimingHeader is Server-Timing's canonical key (requestIDHeaders).
const serverTimingHeader = "Server-Timing"

// mergeTimings adds the Server-Timing phases of headers or trailers (several
// field lines are one list) to m.
func mergeTimings(m map[string]float64, h http.Header) map[string]float64 {
	switch v := h[serverTimingHeader]; len(v) {
	case 0:
		return m
	case 1:
		return protocol.AddServerTiming(m, v[0])
	default:
		return protocol.AddServerTiming(m, strings.Join(v, ", "))
	}
}
