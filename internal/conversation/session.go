package conversation

import (
	"net/http"
)

// Session is what keeps a conversation on one replica: a key sent on every
// turn (as headers and/or a body field), and a token a router hands back on
// a response header, sent back on the turns after it.
type Session struct {
	Key         string
	Headers     []string // header names that carry Key
	BodyField   string   // a body field that carries Key ("user", "prompt_cache_key", "session_id")
	Cookie      string   // a cookie name that carries Key ("" for none)
	RouteHeader string   // the response header whose value is replayed as the same request header
	token       string
}

// Apply puts the session on a turn's request.
func (s *Session) Apply(h http.Header, body map[string]any) {
	if s == nil {
		return
	}
	for _, name := range s.Headers {
		h.Set(name, s.Key)
	}
	if s.Cookie != "" {
		c := s.Cookie + "=" + s.Key
		if prev := h.Get("Cookie"); prev != "" {
			c = prev + "; " + c // the script's own cookies stay
		}
		h.Set("Cookie", c)
	}
	if s.BodyField != "" {
		if _, set := body[s.BodyField]; !set {
			body[s.BodyField] = s.Key
		}
	}
	if s.RouteHeader != "" && s.token != "" {
		h.Set(s.RouteHeader, s.token)
	}
}

// Answered keeps the router's token from a turn's response headers; a
// response without one keeps the token already held (routers set it once).
func (s *Session) Answered(h http.Header) {
	if s == nil || s.RouteHeader == "" || h == nil {
		return
	}
	if v := h.Get(s.RouteHeader); v != "" {
		s.token = v
	}
}

// Token is the router token held (empty before one came back).
func (s *Session) Token() string {
	if s == nil {
		return ""
	}
	return s.token
}
