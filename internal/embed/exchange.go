package embed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/protocol"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// Exchange is one HTTP attempt of a non-streamed call, made through the
// caller's transport under the same split timeouts as a streamed one. A
// non-streamed server sends its headers when the answer is ready, so the
// first-token timeout bounds the wait for them (the time to first byte),
// and idle bounds the silences while the body comes.
type Exchange struct {
	Transport http.RoundTripper
	URL       string
	// Header is sent as it is, not copied: calls in flight may share it
	// (a transport only reads a request's headers), so nothing may change
	// it while one is; an attempt whose headers differ has its own.
	Header      http.Header
	Body        []byte
	Timeouts    stream.Timeouts
	MaxBodySize int64 // 0 = stream.DefaultMaxBodySize
	// Redact cleans error messages of credentials.
	Redact func(string) string
	// Jar, when set, is a cookie jar (k6's VU's): what it holds for URL
	// goes out, and what a 2xx or error answer sets goes in.
	Jar http.CookieJar
	// DumpRequest and DumpResponse, when set, see the request as it goes
	// to the transport and the answer as it comes (k6's --http-debug).
	DumpRequest  func(*http.Request)
	DumpResponse func(*http.Response)
}

// Attempt is what one exchange got: the answer's bytes and its times.
type Attempt struct {
	Status int
	Header http.Header
	Proto  string
	Body   []byte // the whole 2xx body, nil otherwise; valid until Release
	Err    *stream.Error
	// Start is t0 (the request handed to the transport), Headers the
	// response's headers, End the body's last byte.
	Start, Headers, End time.Time
	Connect             time.Duration    // dial + TLS of a new connection (0 reused)
	RetryAfter          measure.Duration // none without one
	RequestBytes        int64
	ResponseBytes       int64
	ServerTimings       map[string]float64
	RequestID           string
	scratch             *[]byte // Body's buffer when it is a pooled one
}

// Release hands the body's buffer back for another answer: Body is nil
// after it. An answer is read once (Finish* keep nothing that views it),
// so a chunked answer is read into a pooled buffer and parsed there, not
// copied out of it.
func (a *Attempt) Release() {
	if a.scratch != nil && cap(a.Body) <= maxScratchBody {
		*a.scratch = a.Body[:0]
		scratchBodies.Put(a.scratch)
	}
	a.Body, a.scratch = nil, nil
}

// TTFB is t0 → headers, not measured without a response.
func (a *Attempt) TTFB() measure.Duration { return measure.Between(a.Start, a.Headers) }

// Duration is t0 → the body's last byte, not measured without it.
func (a *Attempt) Duration() measure.Duration { return measure.Between(a.Start, a.End) }

// errorBodyLimit bounds how much of an error answer is read for its message.
const errorBodyLimit = 64 << 10

// exchangeRun is one Do: the Attempt it returns, with what its request
// needs while it runs (its watchdog, trace hooks and body reader) beside
// it, one allocation for the four.
type exchangeRun struct {
	a     Attempt
	wd    stream.Watchdog
	trace httptrace.ClientTrace
	body  bytes.Reader
}

// Do runs the exchange. It never returns a nil Attempt: a failure is
// classified in Err, as the chat calls' are.
func (x *Exchange) Do(parent context.Context) *Attempt {
	run := &exchangeRun{a: Attempt{RequestBytes: int64(len(x.Body))}}
	a, wd := &run.a, &run.wd
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	wd.Init(x.Timeouts, cancel)
	defer wd.Stop()
	wd.Total()
	run.trace = httptrace.ClientTrace{
		GetConn: func(string) { wd.ConnectStart() },
		GotConn: func(info httptrace.GotConnInfo) { wd.ConnectDone(info.Reused) },
	}
	ctx = httptrace.WithClientTrace(ctx, &run.trace)
	run.body.Reset(x.Body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, x.URL, &run.body)
	if err != nil {
		a.fail(stream.ErrNetwork, x.clean("invalid request: "+err.Error()))
		return a
	}
	req.Header = x.Header // shared, read only (Header)
	if host := x.Header.Get("Host"); host != "" {
		req.Host = host // as k6/http: a Host header names the virtual host (Go ignores it in Header)
	}
	if x.Jar != nil {
		if cookies := x.Jar.Cookies(req.URL); len(cookies) > 0 {
			req.Header = x.Header.Clone()
			for _, c := range cookies {
				req.AddCookie(c)
			}
		}
	}
	req.ContentLength = int64(len(x.Body))
	if x.DumpRequest != nil {
		x.DumpRequest(req)
	}
	a.Start = time.Now()
	wd.Start()
	resp, err := x.Transport.RoundTrip(req)
	a.Connect = wd.Connect()
	if err != nil {
		a.fail(stream.Classify(err, causeOf(ctx, parent)), x.clean(err.Error()))
		return a
	}
	defer resp.Body.Close()
	a.Headers = time.Now()
	if x.DumpResponse != nil {
		x.DumpResponse(resp)
	}
	if x.Jar != nil {
		if set := resp.Cookies(); len(set) > 0 {
			x.Jar.SetCookies(req.URL, set)
		}
	}
	wd.FirstOutput()
	wd.Bytes()
	a.Status, a.Header, a.Proto = resp.StatusCode, resp.Header, resp.Proto
	a.RequestID = requestID(resp.Header)
	if d, ok := protocol.ParseRetryAfter(resp.Header, a.Headers); ok {
		a.RetryAfter = measure.Of(d)
	}
	if resp.StatusCode >= 300 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyLimit))
		a.End = time.Now()
		text := ErrorMessage(msg)
		if text == "" {
			text = stream.Excerpt(string(msg), 300)
		}
		a.fail(stream.StatusClass(resp.StatusCode), x.clean(fmt.Sprintf("HTTP %d: %s", resp.StatusCode, text)))
		return a
	}
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(strings.ToLower(ct), "text/html") {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyLimit))
		a.End = time.Now()
		a.fail(stream.ErrDecode, x.clean(fmt.Sprintf("expected JSON, got %s (HTTP %d): %s", ct, resp.StatusCode, stream.Excerpt(string(msg), 200))))
		return a
	}
	if ce := stream.UnaskedEncoding(resp.Header); ce != "" {
		a.End = time.Now()
		a.fail(stream.ErrDecode, stream.UnaskedEncodingMessage(ce, resp.StatusCode))
		return a
	}
	a.Body, a.scratch, err = x.readAll(resp, wd)
	a.End = time.Now()
	a.ResponseBytes = int64(len(a.Body))
	a.ServerTimings = serverTimings(resp)
	if err != nil {
		a.Body = nil
		var se *stream.Error
		if errors.As(err, &se) {
			a.Err = se
		} else {
			a.fail(stream.Classify(err, causeOf(ctx, parent)), x.clean("reading the answer: "+err.Error()))
		}
	}
	return a
}

func (a *Attempt) fail(t stream.ErrorType, msg string) {
	a.Err = &stream.Error{Type: t, Message: msg}
}

func (x *Exchange) clean(s string) string {
	if x.Redact != nil {
		return x.Redact(s)
	}
	return s
}

// causeOf is the classifying cause: the test's own end wins over ours.
func causeOf(ctx, parent context.Context) error {
	if parent.Err() != nil {
		return parent.Err()
	}
	return context.Cause(ctx)
}

// readAll reads the body, feeding the idle timer, within the size limit.
// With a Content-Length it reads into one buffer of that size; without one
// (a chunked answer) it reads into a pooled buffer, returned with it for
// Release, so no guess of the size is allocated, zeroed and collected each
// call, nor the body copied out of it.
func (x *Exchange) readAll(resp *http.Response, wd *stream.Watchdog) ([]byte, *[]byte, error) {
	limit := x.MaxBodySize
	if limit <= 0 {
		limit = stream.DefaultMaxBodySize
	}
	if resp.ContentLength > 0 && resp.ContentLength <= limit {
		body, err := readInto(make([]byte, 0, int(resp.ContentLength)+1), resp.Body, wd, limit) // +1: the read that sees EOF needs room
		return body, nil, err
	}
	scratch, _ := scratchBodies.Get().(*[]byte)
	if scratch == nil {
		scratch = new([]byte)
	}
	buf, err := readInto((*scratch)[:0], resp.Body, wd, limit)
	if err != nil {
		return nil, nil, err
	}
	return buf, scratch, nil
}

// scratchBodies are the read buffers of chunked answers (Release); one
// larger than maxScratchBody is left to the collector rather than kept.
var scratchBodies sync.Pool //nolint:gochecknoglobals // a cache of buffers, no state

const maxScratchBody = 1 << 20

func readInto(buf []byte, body io.Reader, wd *stream.Watchdog, limit int64) ([]byte, error) {
	if cap(buf) == 0 {
		buf = make([]byte, 0, 16<<10)
	}
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if n > 0 {
			wd.Bytes()
		}
		if int64(len(buf)) > limit {
			return nil, &stream.Error{Type: stream.ErrDecode, Message: fmt.Sprintf("answer body exceeds maxBodySize (%d bytes)", limit)}
		}
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
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

func serverTimings(resp *http.Response) map[string]float64 {
	v := strings.Join(append(resp.Header.Values("Server-Timing"), resp.Trailer.Values("Server-Timing")...), ", ")
	if v == "" {
		return nil
	}
	return protocol.ParseServerTiming(v)
}
