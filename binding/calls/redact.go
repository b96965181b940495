package calls

// Credentials never reach a log, an error, a result or a report: a client's
// redactor knows its secrets and cleans text that may carry them.

import (
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/llmstream/xk6-llmstream/internal/config"
)

// debugBodyLimit bounds how much of a request body --http-debug=full prints.
const debugBodyLimit = 64 << 10

// secretHeaders carry credentials in the protocols we speak; their values are
// never printed.
var secretHeaders = map[string]bool{ //nolint:gochecknoglobals // read-only table
	"Authorization": true, "Proxy-Authorization": true, "X-Api-Key": true, "Api-Key": true,
	"X-Goog-Api-Key": true, "Cookie": true, "Set-Cookie": true,
}

// redactor holds the secrets of one client: its API key and the values of the
// credential headers it sends.
type redactor struct {
	secrets []string
}

func newRedactor(opts *config.Client) redactor {
	var r redactor
	if len(opts.APIKey) >= 4 {
		r.secrets = append(r.secrets, opts.APIKey)
	}
	for name, v := range opts.Headers {
		if secretHeaders[http.CanonicalHeaderKey(name)] && len(v) >= 4 {
			r.secrets = append(r.secrets, v)
		}
	}
	if sm := opts.ServerMetrics; sm != nil {
		for _, v := range sm.Headers { // any header of a metrics endpoint may be its credential
			if len(v) >= 4 {
				r.secrets = append(r.secrets, v)
			}
		}
	}
	return r
}

// clean removes the client's secrets from s.
func (r redactor) clean(s string) string {
	for _, v := range r.secrets {
		s = strings.ReplaceAll(s, v, "[REDACTED]")
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

// dumpRequest renders a request for --http-debug with credentials redacted.
func (r redactor) dumpRequest(req *http.Request, withBody bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Request:\n%s %s %s\nHost: %s\n", req.Method, req.URL.RequestURI(), req.Proto, req.URL.Host)
	dumpHeaders(&b, req.Header)
	if withBody && req.GetBody != nil {
		if body, err := req.GetBody(); err == nil {
			var sb strings.Builder
			buf := make([]byte, 4096)
			for sb.Len() < debugBodyLimit {
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
	return r.clean(b.String())
}

// dumpResponse renders response headers for --http-debug; a stream's body is not
// dumped (reading it here would hold every event back until the end).
func (r redactor) dumpResponse(resp *http.Response) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Response:\n%s %s\n", resp.Proto, resp.Status)
	dumpHeaders(&b, resp.Header)
	return r.clean(b.String())
}
