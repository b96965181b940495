package runrecord

import (
	"fmt"
	"strings"
)

// ServerReach counts a group's HTTP requests (every attempt of every call,
// and every reconnection of a stream) by whether they can have reached the
// server: what a server's own count of finished requests is held against.
// A call refused at connect never reached it; counting it beside the
// answered ones blamed a gateway for a server that was down.
type ServerReach struct {
	// Answered: a 2xx response came back. The server took the request and
	// counts it when it ends it, a request the client cut short included.
	Answered uint64 `json:"answered,omitempty"`
	// Refused: another status came back, from the server or from something
	// in front of it. An engine counts no request it refused; a gateway's
	// answer never reached it. Either way, it may or may not be counted.
	Refused uint64 `json:"refused,omitempty"`
	// Unanswered: the request went out and no response came back (the
	// server died, or the client gave up first): it may have taken it.
	Unanswered uint64 `json:"unanswered,omitempty"`
	// NotSent: nothing went out (connection refused, DNS, dial or TLS
	// failure): the server never saw it.
	NotSent uint64 `json:"not_sent,omitempty"`
}

// Add counts o's requests in r as well.
func (r *ServerReach) Add(o ServerReach) {
	r.Answered += o.Answered
	r.Refused += o.Refused
	r.Unanswered += o.Unanswered
	r.NotSent += o.NotSent
}

// Total is every request counted.
func (r ServerReach) Total() uint64 { return r.Answered + r.Refused + r.Unanswered + r.NotSent }

// Bounds are how many of these requests the server can have finished: at
// least the answered ones, at most every one that went out.
func (r ServerReach) Bounds() (lo, hi uint64) {
	return r.Answered, r.Answered + r.Refused + r.Unanswered
}

// String lists the counts in words, the empty ones left out.
func (r ServerReach) String() string {
	var parts []string
	for _, p := range []struct {
		n    uint64
		what string
	}{
		{r.Answered, "answered (2xx)"},
		{r.Refused, "refused with an error status"},
		{r.Unanswered, "sent without an answer"},
		{r.NotSent, "never sent (connection refused, DNS or TLS failure)"},
	} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	if len(parts) == 0 {
		return "no request"
	}
	return strings.Join(parts, ", ")
}
