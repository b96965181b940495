package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/llmstream/xk6-llmstream/bench/internal/harness"
)

// profile runs k6 (gapSamples=request) for profileSeconds plus a start-up
// margin, takes a CPU profile from its REST API, and prints how the CPU splits.
func (s *settings) profile(sim *harness.Sim) error {
	port, err := harness.FreePort()
	if err != nil {
		return err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	const warmUp = 5 * time.Second // VUs initialised, connections open
	p := *s
	p.duration = time.Duration(s.profileSeconds)*time.Second + 2*warmUp
	summary := filepath.Join(s.out, "profile-summary.json")
	// #nosec G204 -- the benchmark starts its own binaries with its own flags
	cmd := exec.Command(s.k6, p.k6Args(sim, "bench/k6-stream.js", "request", addr, summary)...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	time.Sleep(warmUp)
	pprofPath := filepath.Join(s.out, "k6-cpu.pprof")
	fetchErr := fetch(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, s.profileSeconds), pprofPath)
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("k6 (profiled): %w", err)
	}
	if fetchErr != nil {
		return fetchErr
	}
	fmt.Printf("\nCPU profile of k6 (gapSamples=request), %ds of a %d-stream run: %s\n", s.profileSeconds, s.vus, pprofPath)
	fmt.Printf("  go tool pprof -top %s %s\n", s.k6, pprofPath)
	return splitProfile(s.k6, pprofPath)
}

// splitProfile prints how a k6 CPU profile splits by who spends the CPU.
func splitProfile(k6, pprofPath string) error {
	traces, err := exec.Command("go", "tool", "pprof", "-traces", k6, pprofPath).Output() // #nosec G204 -- go tool pprof on the benchmark's own profile
	if err != nil {
		return fmt.Errorf("go tool pprof -traces: %w", err)
	}
	return printSplit(os.Stdout, traces)
}

func fetch(url, path string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	f, err := os.Create(path) // #nosec G304 -- the operator's path
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(f, resp.Body)
	return err
}

// A category claims a sample when any frame of its stack contains one of its
// markers. Rules are tried in order, so a sample goes to the most specific
// one: the SSE parser calls our event handler (range-over-func), so decoding
// must be claimed before framing, and socket reads under our reader before
// either.
var categories = []struct { //nolint:gochecknoglobals // fixed table
	name    string
	markers []string
}{
	{"socket reads under our body reader", []string{"internal/stream.(*timedReader).Read"}},
	{"ours: decoding (internal/protocol, gjson)", []string{"xk6-llmstream/internal/protocol.", "tidwall/gjson."}},
	{"ours: folding events, clock (stream.handle)", []string{"internal/stream.(*Call).handle", "internal/stream.(*Call).output"}},
	{"ours: SSE framing (internal/stream sse.go)", []string{"internal/stream.(*sseFramer)"}},
	{"ours: rest of stream.Consume", []string{"internal/stream.(*Call).Consume"}},
	{"ours: report collector (internal/report)", []string{"xk6-llmstream/internal/report."}},
	{"ours: k6 samples of a call (figure table, tags)", []string{"xk6-llmstream/binding/calls.callSamples", "xk6-llmstream/binding/calls.attemptTags"}},
	{"ours: JS result (record.JS)", []string{"xk6-llmstream/internal/record.(*Call).JS"}},
	{"k6's HTTP client under an attempt (httpext, net/http request)", []string{"go.k6.io/k6/lib/netext/httpext.", "net/http.(*Client)."}},
	{"ours: rest of a call's goroutine (policy, attempt set-up)", []string{"xk6-llmstream/binding/calls.(*Client).Chat.func", "xk6-llmstream/binding/calls.(*Workers)."}},
	{"ours: chat() on the event loop (the call plan)", []string{"xk6-llmstream/binding/calls.(*Client).Chat"}},
	{"ours: rest of the module", []string{"github.com/llmstream/xk6-llmstream"}},
	{"k6: metrics ingest and outputs", []string{"go.k6.io/k6/metrics.", "go.k6.io/k6/output.", "go.k6.io/k6/internal/metrics", "go.k6.io/k6/internal/output"}},
	{"JavaScript (sobek)", []string{"github.com/grafana/sobek"}},
	{"k6 (metrics engine, outputs, HTTP wrapper, executor)", []string{"go.k6.io/k6"}},
	{"net/http transport (request writes, connection loops)", []string{"net/http."}},
	{"garbage collector, background workers", []string{"runtime.gcBgMarkWorker"}},
	{"other (scheduler, idle, syscalls not claimed above)", nil},
}

// printSplit reads `go tool pprof -traces` output: blocks separated by
// "-----------+---…" lines, each "<value> <leaf>" then one caller per line.
func printSplit(w io.Writer, traces []byte) error {
	totals := make([]time.Duration, len(categories))
	var all time.Duration
	var stack []string
	var value time.Duration
	flush := func() {
		if len(stack) == 0 {
			return
		}
		all += value
		totals[classify(stack)] += value
		stack, value = stack[:0], 0
	}
	sc := bufio.NewScanner(bytes.NewReader(traces))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	inTraces := false
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "-----------+") {
			flush()
			inTraces = true
			continue
		}
		if !inTraces || strings.TrimSpace(line) == "" {
			continue
		}
		fields := strings.Fields(line)
		if len(stack) == 0 && len(fields) >= 2 {
			d, err := time.ParseDuration(fields[0])
			if err != nil {
				return fmt.Errorf("trace value %q: %w", fields[0], err)
			}
			value = d
			stack = append(stack, fields[1])
			continue
		}
		stack = append(stack, fields[0])
	}
	flush()
	if err := sc.Err(); err != nil {
		return err
	}
	if all == 0 {
		return fmt.Errorf("empty profile")
	}
	fmt.Fprintf(w, "  %-56s %9s %6s\n", "where k6's CPU went (each sample counted once)", "CPU", "share")
	for i, c := range categories {
		fmt.Fprintf(w, "  %-56s %9s %5.1f%%\n", c.name, totals[i].Round(10*time.Millisecond),
			100*float64(totals[i])/float64(all))
	}
	fmt.Fprintf(w, "  %-56s %9s\n", "total samples", all.Round(10*time.Millisecond))
	return nil
}

func classify(stack []string) int {
	for i, c := range categories {
		for _, frame := range stack {
			for _, m := range c.markers {
				if strings.Contains(frame, m) {
					return i
				}
			}
		}
	}
	return len(categories) - 1
}
