package redact

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// A debug dump (k6's --http-debug) of the requests a client sends and the
// responses it gets, with credentials out: a credential header's value is
// never printed, and the rest goes through Clean (a key in the request
// line's query, a token a server echoes in a header or a body).

// DebugBodyLimit bounds how much of a request body a full dump prints.
const DebugBodyLimit = 64 << 10

// DumpRequest renders a request: its line, its headers, and with withBody
// (--http-debug=full) up to DebugBodyLimit bytes of its body.
func (r *Redactor) DumpRequest(req *http.Request, withBody bool) string {
	var b strings.Builder
	host := req.Host // a Host header's virtual host, else the URL's
	if host == "" {
		host = req.URL.Host
	}
	fmt.Fprintf(&b, "Request:\n%s %s %s\nHost: %s\n", req.Method, requestURI(req.URL), req.Proto, host)
	dumpHeaders(&b, req.Header)
	if withBody && req.GetBody != nil {
		if body, err := req.GetBody(); err == nil {
			data, _ := io.ReadAll(io.LimitReader(body, DebugBodyLimit))
			_ = body.Close()
			b.WriteString("\n" + string(data) + "\n")
		}
	}
	return r.Clean(b.String())
}

// DumpResponse renders a response's status and headers; a stream's body is
// not dumped (reading it here would hold every event back until the end).
func (r *Redactor) DumpResponse(resp *http.Response) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Response:\n%s %s\n", resp.Proto, resp.Status)
	dumpHeaders(&b, resp.Header)
	return r.Clean(b.String())
}

func dumpHeaders(b *strings.Builder, h http.Header) {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range h[k] {
			if IsCredentialHeader(k) {
				v = Mark
			}
			fmt.Fprintf(b, "%s: %s\n", k, v)
		}
	}
}

// requestURI is the request line's target with the values of its
// credential parameters replaced, whether or not the Redactor learned them;
// other parameters (an api-version) stay readable.
func requestURI(u *url.URL) string {
	if u.RawQuery == "" {
		return u.RequestURI()
	}
	c := *u
	parts := strings.Split(c.RawQuery, "&")
	for i, p := range parts {
		if name, _, ok := strings.Cut(p, "="); ok && isCredentialParam(name) {
			parts[i] = name + "=" + urlMark
		}
	}
	c.RawQuery = strings.Join(parts, "&")
	return c.RequestURI()
}
