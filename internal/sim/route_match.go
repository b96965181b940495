package sim

import (
	"net/http"
	"strings"
)

// Routes whose path carries a parameter (Gemini's /v1beta/models/{model}:…),
// raw event streams opened with GET, and protocols that read more of the
// request than its body. The exact-path registry in render.go stays the
// common case; these are the extensions some native wire formats need.

var prefixRoutes []prefixRoute //nolint:gochecknoglobals // filled by init, read-only after

type prefixRoute struct {
	prefix string
	p      protocol
}

// registerPrefixRoute serves p at every path under prefix (POST); p reads the
// rest of the path with parseRequest. Called from init functions only.
func registerPrefixRoute(prefix string, p protocol) {
	for _, r := range prefixRoutes {
		if r.prefix == prefix {
			panic("llm-sim: prefix route registered twice: " + prefix)
		}
	}
	prefixRoutes = append(prefixRoutes, prefixRoute{prefix, p})
}

// lookupRoute finds the protocol serving path: an exact route first, then the
// longest matching prefix route.
func lookupRoute(path string) (protocol, bool) {
	if p, ok := routes[path]; ok {
		return p, true
	}
	var best *prefixRoute
	for i := range prefixRoutes {
		r := &prefixRoutes[i]
		if strings.HasPrefix(path, r.prefix) && (best == nil || len(r.prefix) > len(best.prefix)) {
			best = r
		}
	}
	if best == nil {
		return nil, false
	}
	return best.p, true
}

// getStreamer is a protocol that can also be opened with GET (a raw event
// stream a browser's EventSource would open).
type getStreamer interface{ acceptsGET() }

// allowsMethod reports whether p serves method.
func allowsMethod(p protocol, method string) bool {
	if method == http.MethodPost {
		return true
	}
	_, get := p.(getStreamer)
	return get && method == http.MethodGet
}

// allowHeader is the Allow header of p's routes.
func allowHeader(p protocol) string {
	if _, get := p.(getStreamer); get {
		return "GET, POST"
	}
	return http.MethodPost
}

// requestParser is a protocol that reads the path, query or headers as well
// as the body (a model named in the path, a resumed stream's Last-Event-ID).
type requestParser interface {
	parseRequest(r *http.Request, body []byte) (*genRequest, *apiError)
}

// parseRequest parses a request with whatever p reads.
func parseRequest(p protocol, r *http.Request, body []byte) (*genRequest, *apiError) {
	if rp, ok := p.(requestParser); ok {
		return rp.parseRequest(r, body)
	}
	return p.parse(body)
}
