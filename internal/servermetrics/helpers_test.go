package servermetrics

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func reduceFixture(t *testing.T, name, contentType string) *snapshot {
	t.Helper()
	p, err := parseBody(fixture(t, name), contentType)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return reduce(p.families, "")
}

// endpoint serves whatever body the test sets, with a status and a content
// type, at every path but /v1/models, where it lists vLLM's models.
type endpoint struct {
	mu     sync.Mutex
	body   []byte
	status int
	ctype  string
	hits   int
	header http.Header
	srv    *httptest.Server
}

func newEndpoint(t *testing.T, body []byte) *endpoint {
	t.Helper()
	e := &endpoint{body: body, status: 200, ctype: "text/plain; version=0.0.4; charset=utf-8"}
	models := fixture(t, "vllm_models.json")
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" { // vLLM's list beside its metrics, not a scrape
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(models)
			return
		}
		e.mu.Lock()
		e.hits++
		e.header = r.Header.Clone()
		body, status, ct := e.body, e.status, e.ctype
		e.mu.Unlock()
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	t.Cleanup(e.srv.Close)
	return e
}

func (e *endpoint) set(body []byte, status int, ctype string) {
	e.mu.Lock()
	e.body, e.status = body, status
	if ctype != "" {
		e.ctype = ctype
	}
	e.mu.Unlock()
}

func (e *endpoint) url() string { return e.srv.URL + "/metrics" }

// warnings collects Warn messages.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) add(m string) { w.mu.Lock(); w.msgs = append(w.msgs, m); w.mu.Unlock() }
func (w *warnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.msgs...)
}
