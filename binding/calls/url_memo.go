package calls

import (
	"go.k6.io/k6/lib/netext/httpext"

	"github.com/llmstream/xk6-llmstream/internal/protocol"
)

// A client's last request URL as k6 holds it (parsed, its credentials
// masked for output, its name), which k6's request path wants with every
// request: parsing it again for each attempt of calls that nearly always
// go to the same URL was work with the same result. The parsed URL is only
// read by k6, so calls in flight share it. The event loop owns the memo
// (calls plan there).

// urlMemo is the last URL and name, and what k6 made of them.
type urlMemo struct {
	raw, name string
	u         httpext.URL
	err       error
	set       bool
}

// k6URL is k6's URL for raw with the given name, parsed once for a run of
// calls to the same URL.
func (c *Client) k6URL(raw, name string) (httpext.URL, error) {
	m := &c.lastURL
	if !m.set || m.raw != raw || m.name != name {
		u, err := httpext.NewURL(raw, name)
		*m = urlMemo{raw: raw, name: name, u: u, err: err, set: true}
	}
	return m.u, m.err
}

// joinMemo is the last path joined to the client's base URL, and the URL.
type joinMemo struct {
	path, url string
	set       bool
}

// joinURL is the client's base URL joined with path, joined once for a
// run of calls to the same path (a new string for each call otherwise).
func (c *Client) joinURL(path string) string {
	m := &c.lastJoin
	if !m.set || m.path != path {
		*m = joinMemo{path: path, url: protocol.JoinURL(c.opts.BaseURL, path), set: true}
	}
	return m.url
}
