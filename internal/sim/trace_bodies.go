package sim

import (
	"encoding/json"
	"net/http"
	"strings"
)

// With trace_bodies (--trace-bodies) each trace record also holds what the
// client sent: the request body (the whole history a conversation sends)
// and the request headers (a session key, a router token), so a test can
// check the client against what the server got. Off by default: bodies
// make the trace as large as the traffic. Credentials are never written.

// secretHeaders are written as "[redacted]".
var secretHeaders = map[string]bool{ //nolint:gochecknoglobals // read-only table
	"authorization": true, "proxy-authorization": true, "x-api-key": true, "api-key": true, "x-goog-api-key": true,
}

// traceRequest copies the request's body and headers into rec.
func (s *Server) traceRequest(rec *TraceRecord, r *http.Request, body []byte) {
	if s.trace == nil || !s.cfg.TraceBodies {
		return
	}
	if json.Valid(body) {
		rec.Body = append(json.RawMessage(nil), body...)
	}
	rec.Headers = make(map[string]string, len(r.Header))
	for k, v := range r.Header {
		val := strings.Join(v, ", ")
		if secretHeaders[strings.ToLower(k)] {
			val = "[redacted]"
		}
		rec.Headers[k] = val
	}
}
