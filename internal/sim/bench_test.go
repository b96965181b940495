package sim

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkServeStreamedTokens measures how many streamed tokens per second
// llm-sim serves with the zero-delay "fast" profile: `streams` concurrent
// clients on loopback, each reading 1000-token answers (one chunk per token,
// flushed one by one). The client runs in the same process, so with -cpu 1
// server and client share one core and the figure is a lower bound for the
// server alone.
//
//	go test -run '^$' -bench BenchmarkServeStreamedTokens -benchtime 3s -cpu 1,2 ./internal/sim/
func BenchmarkServeStreamedTokens(b *testing.B) {
	for _, streams := range []int{1, 50} {
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) {
			benchStream(b, streams, 1000)
		})
	}
}

func benchStream(b *testing.B, streams, maxTokens int) {
	b.Helper()
	cfg := DefaultConfig()
	cfg.Models = []ModelConfig{fastModel("sim-fast")}
	srv, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: streams, DisableCompression: true}}
	defer func() {
		client.CloseIdleConnections()
		_ = srv.Close()
		ts.Close()
	}()
	body := fmt.Sprintf(`{"model":"sim-fast","messages":[{"role":"user","content":"benchmark"}],"max_tokens":%d,"stream":true,"stream_options":{"include_usage":true}}`, maxTokens)
	marker := []byte(`"delta":{"content":"`)

	var tokens atomic.Int64
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, streams)
	b.ResetTimer()
	start := time.Now()
	for range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				resp, err := client.Post(ts.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
				if err != nil {
					errs <- err
					return
				}
				br := bufio.NewReaderSize(resp.Body, 32<<10)
				n := 0
				for {
					line, err := br.ReadSlice('\n')
					if bytes.Contains(line, marker) {
						n++
					}
					if err != nil {
						break
					}
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if n != maxTokens {
					errs <- fmt.Errorf("got %d tokens, want %d", n, maxTokens)
					return
				}
				tokens.Add(int64(n))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.ReportMetric(float64(tokens.Load())/elapsed.Seconds(), "tokens/s")
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(tokens.Load()), "ns/token")
}
