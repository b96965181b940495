package calls

// One HTTP attempt through k6's own client (httpext), so k6 still measures
// and emits http_req_*, with internal/stream's tap under k6's tracing
// transport: the attempt itself (its timeouts, trace hooks, the response and
// body handed to the stream) is a stream.Attempt, which this file only
// gives k6's request path, its arrival clocks and its debug dump.

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"go.k6.io/k6/lib"
	"go.k6.io/k6/lib/netext/httpext"
	"go.k6.io/k6/metrics"
	"gopkg.in/guregu/null.v3"

	"github.com/llmstream/xk6-llmstream/internal/redact"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// request is everything one attempt needs, prepared by the call plan.
type request struct {
	method  string
	url     string
	k6URL   httpext.URL // url as k6's request path takes it (url_memo.go)
	urlErr  error       // why url is not one
	header  http.Header
	payload []byte
	// getPayload reads payload from its start (http.Request.GetBody).
	getPayload func() (io.ReadCloser, error)
	model      string
	name       string // the client's label: k6's URL name
	tags       metrics.TagsAndMeta
	timeouts   stream.Timeouts
	stream     stream.Config    // without a watchdog: each attempt has its own
	redact     *redact.Redactor // the call's secrets: its error texts and debug dump
	transport  *Transports
	http       string // the client's HTTP version (config.HTTP…)
	// responseHeaders sees every response's headers (nil: nothing does).
	responseHeaders func(http.Header)
	// trace gives each request its traceparent (nil: the client does not
	// trace, or the script set its own).
	trace *requestTrace
}

// try runs one attempt and returns its finished call. resume is the call of a
// raw event stream that broke, reopened with Last-Event-ID: it keeps its clock.
func (r *request) try(parent context.Context, st *lib.State, resume *stream.Call) (*stream.Call, *stream.Result) {
	at := stream.Attempt{Config: r.stream, Timeouts: r.timeouts, Resume: resume, ArrivalClock: arrivalClock,
		ResponseHeaders: r.responseHeaders}
	at.DumpRequest, at.DumpResponse = httpDebug(st, r.redact) //nolint:bodyclose // dump hooks, no response
	return at.Run(parent, func(ctx context.Context, tap *stream.Tap) error { return r.send(ctx, st, tap) })
}

// send makes the attempt's request through k6's own request path, so k6
// measures and emits http_req_* and its options hold, with the attempt's tap
// under k6's tracing transport.
func (r *request) send(ctx context.Context, st *lib.State, tap *stream.Tap) error {
	if r.urlErr != nil {
		return &stream.Error{Type: stream.ErrNetwork, Message: "invalid URL: " + r.urlErr.Error()}
	}
	args := attemptArgsPool.Get().(*attemptArgs) //nolint:forcetypeassert // the pool holds nothing else
	defer args.put()
	req, err := r.httpRequest(ctx, &args.req)
	if err != nil {
		return &stream.Error{Type: stream.ErrNetwork, Message: "invalid request: " + err.Error()}
	}
	if host := r.header.Get("Host"); host != "" {
		req.Host = host // as k6/http: a Host header names the virtual host; Go sends only this field
	}
	// The VU's cookie jar, as for k6/http's requests: its cookies go out
	// with the request, and k6's request path keeps what the answer sets
	// (ActiveJar), so a gateway's sticky-session cookie holds from call to call.
	cookies := vuCookies(st, req.URL)
	req.Header = r.attemptHeader(tap.LastEventID(), len(cookies) > 0)
	for _, c := range cookies {
		req.AddCookie(c)
	}
	setPayload(req, r.payload, r.getPayload)
	vuState := &args.state
	*vuState = *st // a shallow copy: only the transport and the debug option differ
	vuState.Transport = tap.Transport(r.transport.get(st.Transport, st.Dialer, r.http))
	vuState.Options.HTTPDebug = null.String{} // the tap dumps, redacted (try)
	args.url = r.k6URL                        // a copy: k6's request path takes its address
	args.preq = httpext.ParsedHTTPRequest{
		URL: &args.url, Req: req, // the body is the request's own (setPayload)
		// The request's own deadline is the total timeout plus a margin: the
		// attempt's fires first, with a cause that classifies it. The
		// attempt's context has the sooner deadline, so k6 makes no timer
		// for this one (stream.TotalMargin).
		Timeout:      r.timeouts.Total + stream.TotalMargin,
		Throw:        true,
		ResponseType: httpext.ResponseTypeNone,
		Redirects:    maxRedirects(st),
		ActiveJar:    st.CookieJar,
		TagsAndMeta:  r.tags,
		ResponseCallback: func(status int) bool {
			return status >= 200 && status < 400
		},
	}
	_, err = httpext.MakeRequest(ctx, vuState, &args.preq)
	return err //nolint:wrapcheck // classified by the attempt
}

// httpRequest is the attempt's request, made in req, for k6's request
// path. MakeRequest sends a copy of it with a context of its own, made
// from the one it is given (WithContext, as for k6's own http.post, whose
// request has no context either), and reads it only while it runs, so the
// request is one of the attempt's pooled arguments, and its URL the call's
// parsed one (url_memo.go), which k6 and net/http only read. Made by
// NewRequestWithContext, it was the URL parsed again, a header map the
// attempt replaces and the request itself, at every attempt; and with its
// Host set (to the URL's), net/http's client copied the URL once more for
// its cookie jar. An address with an empty port ("host:") gets
// NewRequestWithContext's request, which drops that colon from its own
// copy of the URL.
func (r *request) httpRequest(ctx context.Context, req *http.Request) (*http.Request, error) {
	u := r.k6URL.GetURL()
	if u == nil || strings.HasSuffix(u.Host, ":") {
		return http.NewRequestWithContext(ctx, r.method, r.url, nil)
	}
	*req = http.Request{Method: r.method, URL: u, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
	return req, nil
}

// attemptHeader is the header an attempt sends: the call's own map, which
// calls in flight share (header_template.go), when nothing changes it on
// the way. k6's request path and net/http only read a request's headers,
// but for a Content-Length one, which k6 deletes (Go sets its own); a
// traceparent (a span per attempt) and a reopened stream's Last-Event-ID
// are the attempt's own, as are the VU's cookies (cookies: it has some for
// this request). Those get a copy: a copy for every attempt was a map and
// a slice per header, at every call.
func (r *request) attemptHeader(lastEventID string, cookies bool) http.Header {
	if lastEventID == "" && r.trace == nil && !cookies && r.header.Get("Content-Length") == "" {
		return r.header
	}
	h := r.header.Clone()
	if lastEventID != "" {
		h.Set("Last-Event-ID", lastEventID)
	}
	r.trace.set(h)
	return h
}

// attemptArgs are what an attempt hands k6's request path: a copy of the
// VU's state with the attempt's transport, the request's URL, the HTTP
// request and the parsed request, some 1 350 bytes in four allocations for
// every attempt otherwise. k6 reads them only while MakeRequest runs (its transport
// wrapper, the metrics it emits, the redirect check, the body it reads
// before it returns; the response it returns holds copies), so they are
// free again once it has returned.
type attemptArgs struct {
	state lib.State
	url   httpext.URL
	req   http.Request // httpRequest
	preq  httpext.ParsedHTTPRequest
}

var attemptArgsPool = sync.Pool{New: func() any { return new(attemptArgs) }} //nolint:gochecknoglobals // a pool shared by every attempt is the point

// put clears the arguments (the state holds the VU's logger, samples
// channel, transport and options; the request its tags and body) and
// returns them to the pool.
func (a *attemptArgs) put() {
	*a = attemptArgs{}
	attemptArgsPool.Put(a)
}

// vuCookies are the cookies the VU's jar holds for u (k6 gives each
// iteration a fresh jar unless noCookiesReset is set); none without a jar.
func vuCookies(st *lib.State, u *url.URL) []*http.Cookie {
	if st.CookieJar == nil {
		return nil
	}
	return st.CookieJar.Cookies(u)
}

// maxRedirects is k6's maxRedirects option, with k6's default when unset.
func maxRedirects(st *lib.State) null.Int {
	if st.Options.MaxRedirects.Valid {
		return st.Options.MaxRedirects
	}
	return null.IntFrom(10)
}

// setPayload makes p the request's body, sent as it is, with again (a
// reader of p from its start) as its GetBody. Handed to k6's request path
// as its Body instead, the payload was copied into a string at every
// request (k6 keeps the request body for its response object, which this
// module never reads) and wrapped twice more to be read and read again.
// Go's transport takes a new reader from GetBody for a redirect or a
// retried connection, as with k6's; the body is a reader Go knows is in
// memory, so the request's headers and body still go out in one write.
func setPayload(req *http.Request, p []byte, again func() (io.ReadCloser, error)) {
	if p == nil {
		return
	}
	req.ContentLength = int64(len(p))
	req.GetBody = again
	req.Body = io.NopCloser(bytes.NewReader(p))
}

// payloadReaders is the last payload and a GetBody of it: a call that sends
// the last call's body again (body_memo.go) shares its payload, and a
// function made for each call to read it again was an allocation. The
// event loop owns it (calls plan there).
type payloadReaders struct {
	p     []byte
	again func() (io.ReadCloser, error)
}

// of is a GetBody of p: the last one's when p is the last payload.
func (m *payloadReaders) of(p []byte) func() (io.ReadCloser, error) {
	if p == nil {
		return nil
	}
	if m.again == nil || len(p) != len(m.p) || (len(p) > 0 && &p[0] != &m.p[0]) {
		m.p, m.again = p, func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(p)), nil }
	}
	return m.again
}
