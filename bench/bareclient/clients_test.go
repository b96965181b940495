package main

import (
	"net/http"
	"testing"
)

// Over HTTP/1.1 every goroutine shares one transport (a kept-alive
// connection each); over HTTP/2 each group of connStreams goroutines gets its
// own transport, so its own connection, and speaks h2c.
func TestClientsShareTransportsAsVUsShareConnections(t *testing.T) {
	h1 := newClients(25, "1.1", 10, false)
	for i, c := range h1 {
		if c != h1[0] {
			t.Fatalf("HTTP/1.1: goroutine %d has a client of its own", i)
		}
	}
	if p := h1[0].Transport.(*http.Transport).Protocols; p != nil {
		t.Fatalf("HTTP/1.1: protocols %v set, want the transport's default", p)
	}
	h2 := newClients(25, "2", 10, false)
	groups := map[any][]int{}
	for i, c := range h2 {
		groups[c] = append(groups[c], i)
	}
	if len(groups) != 3 {
		t.Fatalf("HTTP/2, 25 goroutines, 10 to a connection: %d transports, want 3", len(groups))
	}
	for c, g := range groups {
		if p := c.(*http.Client).Transport.(*http.Transport).Protocols; p == nil || !p.UnencryptedHTTP2() || p.HTTP1() {
			t.Fatalf("HTTP/2: protocols %v, want h2c only", p)
		}
		if first := g[0]; first%10 != 0 || len(g) > 10 || g[len(g)-1] != first+len(g)-1 {
			t.Fatalf("HTTP/2: goroutines %v share a transport, want a run of up to 10 from a multiple of 10", g)
		}
	}
}
