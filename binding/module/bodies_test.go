package module

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
)

// bodyServer is a test server that keeps every request's JSON body, in the
// order they came, and answers each with its handler, which gets the body
// decoded.
type bodyServer struct {
	URL    string
	mu     sync.Mutex
	bodies []map[string]any
}

func recordBodies(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, body map[string]any)) *bodyServer {
	t.Helper()
	s := &bodyServer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		s.mu.Lock()
		s.bodies = append(s.bodies, m)
		s.mu.Unlock()
		handle(w, r, m)
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// all is a copy of the bodies received so far.
func (s *bodyServer) all() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.bodies)
}
