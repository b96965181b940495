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
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/llmstream/xk6-llmstream/bench/internal/harness"
)

// profile runs each of the profiled clients for profileSeconds plus a
// start-up margin, takes a CPU profile of k6 from its REST API, and prints
// how the CPU splits: one client's as shares, several side by side in CPU
// per call (the difference between two is where one's extra cost goes).
// With profileRounds above one the clients take turns that many times, each
// profile of profileSeconds, and a client's profiles are added up: a shared
// machine's speed drifts over minutes, and one profile each put a slow
// minute on one side of the difference.
func (s *settings) profile(sim *harness.Sim) error {
	splits := make([]split, len(s.profileClients))
	for round := 1; round <= max(s.profileRounds, 1); round++ {
		for i, client := range s.profileClients {
			sp, err := s.profileOne(sim, client, round)
			if err != nil {
				return err
			}
			splits[i].add(sp)
		}
	}
	if len(splits) == 1 {
		return printShares(os.Stdout, splits[0])
	}
	return printPerCall(os.Stdout, splits)
}

// split is where one profiled run's CPU went, by category, and how many
// calls a second it made; or several runs' of one client, added up (add).
type split struct {
	client      string
	totals      []time.Duration
	all         time.Duration
	callsPerSec float64
	seconds     int // profiled
	// perRound is each profile's CPU µs per call, when profiles were added
	// up (add): how far the rounds spread.
	perRound []float64
}

// add adds the profile sp to s: CPU by category, seconds profiled, and the
// calls made meanwhile (s's calls/s becomes the mean over both).
func (s *split) add(sp split) {
	if s.totals == nil {
		s.totals = make([]time.Duration, len(sp.totals))
	}
	calls := s.callsPerSec*float64(s.seconds) + sp.callsPerSec*float64(sp.seconds)
	for i, d := range sp.totals {
		s.totals[i] += d
	}
	s.client, s.all, s.seconds = sp.client, s.all+sp.all, s.seconds+sp.seconds
	if s.seconds > 0 {
		s.callsPerSec = calls / float64(s.seconds)
	}
	if n := sp.callsPerSec * float64(sp.seconds); n > 0 {
		s.perRound = append(s.perRound, sp.all.Seconds()*1e6/n)
	}
}

// profileOne profiles client's k6 for profileSeconds of a run, the
// round-th.
func (s *settings) profileOne(sim *harness.Sim, client string, round int) (split, error) {
	port, err := harness.FreePort()
	if err != nil {
		return split{}, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	const warmUp = 5 * time.Second // VUs initialised, connections open
	p := *s
	p.duration = time.Duration(s.profileSeconds)*time.Second + 2*warmUp
	summary := filepath.Join(s.out, "profile-summary.json")
	_ = os.Remove(summary)
	cmd, err := p.k6Command(sim, client, addr, summary)
	if err != nil {
		return split{}, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return split{}, err
	}
	time.Sleep(warmUp)
	pprofPath := filepath.Join(s.out, "k6-cpu-"+client+".pprof")
	if s.profileRounds > 1 {
		pprofPath = filepath.Join(s.out, fmt.Sprintf("k6-cpu-%s-%d.pprof", client, round))
	}
	fetchErr := fetch(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, s.profileSeconds), pprofPath)
	if err := cmd.Wait(); err != nil {
		return split{}, fmt.Errorf("k6 (%s, profiled): %w", client, err)
	}
	if fetchErr != nil {
		return split{}, fetchErr
	}
	r, err := readSummary(summary, client)
	if err != nil {
		return split{}, err
	}
	fmt.Printf("\nCPU profile of k6 (%s), %ds of a %d-stream run: %s\n", client, s.profileSeconds, s.vus, pprofPath)
	fmt.Printf("  go tool pprof -top %s %s\n", cmd.Path, pprofPath)
	sp, err := splitProfile(cmd.Path, pprofPath)
	sp.client, sp.callsPerSec, sp.seconds = client, r.callsPerSec(), s.profileSeconds
	return sp, err
}

// splitProfile is how a k6 CPU profile splits by who spends the CPU.
func splitProfile(k6, pprofPath string) (split, error) {
	traces, err := exec.Command("go", "tool", "pprof", "-traces", k6, pprofPath).Output() // #nosec G204 -- go tool pprof on the benchmark's own profile
	if err != nil {
		return split{}, fmt.Errorf("go tool pprof -traces: %w", err)
	}
	return splitTraces(traces)
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
	{"ours: arrival clock's watcher (rxstamp: epoll, peeks)", []string{"internal/rxstamp.(*watcher)", "internal/rxstamp.lookIfLate"}},
	{"socket reads (net/http's read loop, our body reader)", []string{"internal/stream.(*timedReader).Read", "internal/rxstamp.(*Conn).Read", "net.(*conn).Read"}},
	{"socket writes (net/http's write loop)", []string{"net.(*conn).Write"}},
	{"ours: decoding (internal/protocol, gjson)", []string{"xk6-llmstream/internal/protocol.", "tidwall/gjson."}},
	{"ours: folding events, clock (stream.handle)", []string{"internal/stream.(*Call).handle", "internal/stream.(*Call).output"}},
	{"ours: SSE framing (internal/stream sse.go)", []string{"internal/stream.(*sseFramer)"}},
	{"ours: rest of stream.Consume", []string{"internal/stream.(*Call).Consume"}},
	{"ours: report collector (internal/report)", []string{"xk6-llmstream/internal/report."}},
	{"ours: k6 samples of a call (figure table, tags)", []string{"xk6-llmstream/binding/calls.callSamples", "xk6-llmstream/binding/calls.attemptTags"}},
	{"ours: JS result (record.JS)", []string{"xk6-llmstream/internal/record.(*Call).JS"}},
	{"k6's HTTP client (httpext, net/http request)", []string{"go.k6.io/k6/lib/netext/httpext.", "net/http.(*Client)."}},
	{"ours: rest of a call's goroutine (policy, attempt, record)", []string{"xk6-llmstream/binding/calls.(*launched).call", "xk6-llmstream/binding/calls.(*Workers).", "xk6-llmstream/binding/calls.(*retrievalPlan).run"}},
	{"ours: the promise settled (result, the script after await)", []string{"xk6-llmstream/binding/calls.(*launched).settleChat", "xk6-llmstream/binding/calls.(*retrievalPlan).settle"}},
	{"ours: chat() on the event loop (the call plan, promise)", []string{"xk6-llmstream/binding/calls.(*Client).Chat", "xk6-llmstream/binding/calls.(*Client).Embed", "xk6-llmstream/binding/calls.callMethod"}},
	{"ours: rest of the module", []string{"github.com/llmstream/xk6-llmstream"}},
	{"k6/http's JS API (request parse, response object)", []string{"go.k6.io/k6/js/modules/k6/http."}},
	{"k6: samples (ingest, outputs, group summary)", []string{"go.k6.io/k6/metrics.", "go.k6.io/k6/output.", "go.k6.io/k6/internal/metrics", "go.k6.io/k6/internal/output", "go.k6.io/k6/lib.(*GroupSummary)"}},
	{"JavaScript (sobek)", []string{"github.com/grafana/sobek"}},
	{"k6 (executor, VU, event loop)", []string{"go.k6.io/k6"}},
	{"net/http transport (request writes, connection loops)", []string{"net/http."}},
	{"garbage collector, background workers", []string{"runtime.gcBgMarkWorker", "runtime.bgsweep", "runtime.bgscavenge"}},
	{"other (scheduler, idle, syscalls not claimed above)", nil},
}

// splitTraces reads `go tool pprof -traces` output: blocks separated by
// "-----------+---…" lines, each "<value> <leaf>" then one caller per line.
func splitTraces(traces []byte) (split, error) {
	sp := split{totals: make([]time.Duration, len(categories))}
	var stack []string
	var value time.Duration
	flush := func() {
		if len(stack) == 0 {
			return
		}
		sp.all += value
		sp.totals[classify(stack)] += value
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
				return split{}, fmt.Errorf("trace value %q: %w", fields[0], err)
			}
			value = d
			stack = append(stack, fields[1])
			continue
		}
		stack = append(stack, fields[0])
	}
	flush()
	if err := sc.Err(); err != nil {
		return split{}, err
	}
	if sp.all == 0 {
		return split{}, fmt.Errorf("empty profile")
	}
	return sp, nil
}

// printShares prints one split as each category's CPU and share.
func printShares(w io.Writer, sp split) error {
	fmt.Fprintf(w, "  %-62s %9s %6s\n", "where k6's CPU went (each sample counted once)", "CPU", "share")
	for i, c := range categories {
		fmt.Fprintf(w, "  %-62s %9s %5.1f%%\n", c.name, sp.totals[i].Round(10*time.Millisecond),
			100*float64(sp.totals[i])/float64(sp.all))
	}
	fmt.Fprintf(w, "  %-62s %9s\n", "total samples", sp.all.Round(10*time.Millisecond))
	return nil
}

// printPerCall prints splits side by side in CPU µs per call: a category's
// profiled CPU over the calls made meanwhile (the run's calls/s, warm-up
// included, times the profiled seconds), and each split's difference to
// the last one's (list the level to compare with last).
func printPerCall(w io.Writer, splits []split) error {
	calls := make([]float64, len(splits))
	for i, sp := range splits {
		if calls[i] = sp.callsPerSec * float64(sp.seconds); calls[i] <= 0 {
			return fmt.Errorf("%s made no calls", sp.client)
		}
	}
	us := func(i int, d time.Duration) float64 { return d.Seconds() * 1e6 / calls[i] }
	last := len(splits) - 1
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "\nwhere k6's CPU went, µs per call (each sample counted once)\t")
	for _, sp := range splits {
		fmt.Fprintf(tw, "%s\t", sp.client)
	}
	for _, sp := range splits[:last] {
		fmt.Fprintf(tw, "%s − %s\t", sp.client, splits[last].client)
	}
	fmt.Fprintln(tw)
	row := func(name string, value func(i int) float64) {
		fmt.Fprintf(tw, "%s\t", name)
		for i := range splits {
			fmt.Fprintf(tw, "%.1f\t", value(i))
		}
		for i := range splits[:last] {
			fmt.Fprintf(tw, "%+.1f\t", value(i)-value(last))
		}
		fmt.Fprintln(tw)
	}
	for c, cat := range categories {
		row(cat.name, func(i int) float64 { return us(i, splits[i].totals[c]) })
	}
	row("total", func(i int) float64 { return us(i, splits[i].all) })
	if rounds := len(splits[0].perRound); rounds > 1 {
		fmt.Fprintf(tw, "total of each of the %d profiles (min–max)\t", rounds)
		for _, sp := range splits {
			if len(sp.perRound) == 0 {
				fmt.Fprint(tw, "-\t")
				continue
			}
			fmt.Fprintf(tw, "%.0f–%.0f\t", slices.Min(sp.perRound), slices.Max(sp.perRound))
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprint(tw, "calls/s of the profiled runs\t")
	for _, sp := range splits {
		fmt.Fprintf(tw, "%.0f\t", sp.callsPerSec)
	}
	fmt.Fprintln(tw)
	return tw.Flush()
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
