package calls

import (
	"net/http"

	"go.k6.io/k6/lib"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/protocol"
)

// A client's last call headers before the call's own. They depend on the
// API, the request the protocol reads (model, key, streaming flags) and
// k6's userAgent, nearly always the same from call to call: building them
// set and canonicalised each header into a fresh map for every call. The
// client keeps the last set with what it was built from; a call with the
// same inputs takes it as it is when it sets no headers of its own, else a
// clone with its own set on it. The set handed out is shared and read
// only: whatever changes a call's headers (a GET's Content-Type removed,
// an idempotency key, a traceparent) clones them first, and an attempt
// sends them as they are unless it adds its own (attempt.go). The event
// loop owns the kept set (chat(), embed(), rerank() plan there).

// headerKey is what a call's headers before its own are built from, with
// the client's headers (the client's, fixed).
type headerKey struct {
	api string           // the kind of call and its API
	req protocol.Request // what a chat protocol's headers read
	ua  string           // k6's userAgent option
}

// headerTemplate is the last key and the headers built from it.
type headerTemplate struct {
	key headerKey
	h   http.Header
}

// callHeaders are the headers of any call (chat, embed, rerank): a JSON
// body, an uncompressed answer (compression would batch events in the
// decompressor and distort every gap, and hide the body's size), k6's
// userAgent option, then what the API adds (authentication, streaming),
// then the client's headers and the call's over them. api adds the API's
// headers; it is called only when key is not the last call's. The headers
// are shared with other calls when p sets none: clone them to change them.
func (c *Client) callHeaders(st *lib.State, p *config.Call, key headerKey, api func(http.Header)) http.Header {
	// As k6/http: the option's value whether a script set it or it is k6's
	// default ("Grafana k6/<version>", not Valid), and "" sends none (Go
	// leaves out its own for an empty User-Agent).
	key.ua = st.Options.UserAgent.String
	t := &c.lastHeaders
	if t.h == nil || t.key != key {
		h := http.Header{}
		h.Set("Content-Type", "application/json")
		h.Set("Accept-Encoding", "identity")
		h.Set("User-Agent", key.ua)
		api(h)
		for k, v := range c.opts.Headers {
			h.Set(k, v)
		}
		t.key, t.h = key, h
	}
	if len(p.Headers) == 0 {
		return t.h
	}
	h := t.h.Clone()
	for k, v := range p.Headers {
		h.Set(k, v)
	}
	return h
}
