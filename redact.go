package llmstream

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// secretHeaders carry credentials in the protocols we speak; their values are
// never printed.
var secretHeaders = map[string]bool{ //nolint:gochecknoglobals // read-only table
	"Authorization": true, "Proxy-Authorization": true, "X-Api-Key": true, "Api-Key": true,
	"X-Goog-Api-Key": true, "Cookie": true, "Set-Cookie": true,
}

// redact removes the API key (and any value of a credential header the call
// sent) from text that may reach a log, an error, a result or a report.
func (c *Client) redact(s string) string {
	if k := c.opts.APIKey; len(k) >= 4 {
		s = strings.ReplaceAll(s, k, "[REDACTED]")
	}
	for name, v := range c.opts.Headers {
		if secretHeaders[http.CanonicalHeaderKey(name)] && len(v) >= 4 {
			s = strings.ReplaceAll(s, v, "[REDACTED]")
		}
	}
	return s
}

func dumpHeaders(b *strings.Builder, h http.Header) {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range h[k] {
			if secretHeaders[http.CanonicalHeaderKey(k)] {
				v = "[REDACTED]"
			}
			fmt.Fprintf(b, "%s: %s\n", k, v)
		}
	}
}

// debugRequest renders a request for --http-debug with credentials redacted.
func debugRequest(r *http.Request, c *Client, withBody bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Request:\n%s %s %s\nHost: %s\n", r.Method, r.URL.RequestURI(), r.Proto, r.URL.Host)
	dumpHeaders(&b, r.Header)
	if withBody && r.GetBody != nil {
		if body, err := r.GetBody(); err == nil {
			var sb strings.Builder
			buf := make([]byte, 4096)
			for sb.Len() < errorBodyLimit {
				n, err := body.Read(buf)
				sb.Write(buf[:n])
				if err != nil {
					break
				}
			}
			_ = body.Close()
			b.WriteString("\n" + sb.String() + "\n")
		}
	}
	return c.redact(b.String())
}

// debugResponse renders response headers for --http-debug; a stream's body is
// not dumped (reading it here would hold every event back until the end).
func debugResponse(resp *http.Response, c *Client) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Response:\n%s %s\n", resp.Proto, resp.Status)
	dumpHeaders(&b, resp.Header)
	return c.redact(b.String())
}
