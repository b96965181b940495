//go:build linux

package stream

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// BenchmarkAttempt is what one short streamed call costs this package, per
// operation: a 4-token answer from a loopback server (one write, as llm-sim's
// zero-delay model sends it) read through Attempt.Run with the tap, the
// watchdog, the trace hooks and the receive stamps of the connection, against
// the same request made by net/http alone and drained (what k6's own
// http.post does under its wrapper). "parallel" runs 50 callers at once,
// as 50 VUs do: readers then come late, and the arrival watcher peeks at
// the sockets they are late for. The server runs in the same process; its
// share is the same in both.
//
//	go test -run '^$' -bench Attempt -benchmem ./internal/stream
func BenchmarkAttempt(b *testing.B) {
	body := openAIChatBody(4).body
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(body)
	}))
	b.Cleanup(srv.Close)
	transport, spec := stampingClient(b)
	transport.MaxIdleConnsPerHost = 64
	timeouts := Timeouts{Connect: 10 * time.Second, FirstToken: time.Minute, Idle: time.Minute, Total: 10 * time.Minute}
	attempt := func(b *testing.B) {
		a := Attempt{Config: Config{Spec: spec}, Timeouts: timeouts}
		_, r := a.Run(context.Background(), post(srv.URL, transport, nil))
		if !r.OK || r.Chunks != 4 {
			b.Fatalf("attempt: ok=%v err=%v chunks=%d", r.OK, r.Err, r.Chunks)
		}
	}
	client := &http.Client{Transport: transport}
	bare := func(b *testing.B) {
		resp, err := client.Post(srv.URL, "application/json", strings.NewReader(`{}`))
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if err != nil || n != int64(len(body)) {
			b.Fatalf("net/http: %d bytes, %v", n, err)
		}
	}
	for _, c := range []struct {
		name string
		call func(*testing.B)
	}{{"attempt", attempt}, {"net-http", bare}} {
		b.Run(c.name+"/serial", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.call(b)
			}
		})
		b.Run(c.name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(25) // 50 callers on 2 CPUs
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					c.call(b)
				}
			})
		})
	}
}
