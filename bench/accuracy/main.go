// Command accuracy measures how far the k6 module's timings are from the
// truth, with a bare Go client as the floor, against llm-sim's ground-truth
// trace (scripts/accuracy.sh, make accuracy). For each answer shape
// (staggered: lengths drawn uniformly from [min, max] tokens; uniform: every
// answer max tokens, so the streams start and end together), each level of
// concurrent streams and each client in turn, it starts a fresh llm-sim with a
// trace, runs the client for -duration (open answers then finish), joins every
// answer with the trace by request id and prints, per level, the p50 / p99 /
// max of the TTFT error, the read-side error and the per-gap error (client −
// server, ms; see join.go), the CPU seconds of the client and of llm-sim, and
// the TCP connections llm-sim accepted. With -check it fails unless every
// answer joined and the errors are sane (the CI variant).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llmstream/xk6-llmstream/bench/internal/harness"
)

type settings struct {
	k6, sim, bare, out   string
	levels               []int
	shapes, clients      []string
	duration             time.Duration
	decodeMs, ttftMs     float64
	minTokens, maxTokens int
	streamsPerVU         int
	check, checkReuse    bool
	brief                bool   // with check: a verdict line per run, no tables
	counts               string // append the checks' pass/fail counts here (make test's summary)
	rejoin               bool
	runs                 int // of every client at every level, side by side
	profileAt            int
	profileFrom          time.Duration // 0: a third into the run
	profileFor           time.Duration
	k6Bins               map[string]string // client name → k6 binary
	http                 string            // the k6 client's http option; "2" also puts the floor on h2c
	startSpread          time.Duration     // k6's VUs, and the floor's goroutines a VU's worth at a time, start spread over this long
	tls                  bool              // llm-sim serves HTTPS (self-signed), both clients skip verification
}

// result is one run: one client at one level of one shape.
type result struct {
	shape, client     string
	streams, run      int
	e                 *errors
	clientCPU, simCPU float64
	connections       int
}

func main() {
	s := settingsFromFlags()
	results, failures := s.runAll()
	if !s.brief {
		printTables(os.Stdout, s, results)
	}
	if s.check && s.counts != "" {
		if f, err := os.OpenFile(s.counts, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
			_, _ = fmt.Fprintf(f, "passed %d failed %d skipped 0\n", len(results)-failures, failures)
			_ = f.Close()
		}
	}
	if failures > 0 {
		fatal(fmt.Errorf("%d of %d check(s) failed", failures, len(results)))
	}
}

// settingsFromFlags reads the command line, refusing an unknown shape or
// client and options that cannot go together.
func settingsFromFlags() settings {
	var s settings
	levels := flag.String("levels", "1,50,200,500,1000", "concurrent streams, comma-separated")
	shapes := flag.String("shapes", "staggered,uniform", "answer shapes: staggered (lengths uniform in [-min-tokens, -max-tokens]) and/or uniform (all -max-tokens)")
	clients := flag.String("clients", "k6,bare", "clients to run, in this order at every level: k6 (the -k6 binary), bare, or NAME=PATH for another k6 binary (e.g. k6-before=/tmp/k6-old) measured side by side")
	flag.StringVar(&s.k6, "k6", "./k6", "k6 binary with the module")
	flag.StringVar(&s.sim, "sim", "./llm-sim", "llm-sim binary")
	flag.StringVar(&s.bare, "bare", "", "bareclient binary (built from bench/bareclient)")
	flag.StringVar(&s.out, "out", os.TempDir(), "directory for traces, client lines and logs")
	flag.DurationVar(&s.duration, "duration", 15*time.Second, "how long each client starts answers at each level (open answers then finish)")
	flag.Float64Var(&s.decodeMs, "decode-ms", 20, "llm-sim decode step, ms (one token per stream per step)")
	flag.Float64Var(&s.ttftMs, "ttft-ms", 60, "time to first token added to every request by llm-sim, ms")
	flag.IntVar(&s.minTokens, "min-tokens", 100, "shortest staggered answer, tokens")
	flag.IntVar(&s.maxTokens, "max-tokens", 200, "longest staggered answer and every uniform answer, tokens")
	flag.IntVar(&s.streamsPerVU, "streams-per-vu", 10, "concurrent streams per k6 VU")
	flag.BoolVar(&s.check, "check", false, "fail unless every answer joined the trace, none failed, and the TTFT errors are finite and positive")
	flag.IntVar(&s.profileAt, "profile-at", 0, "at this level, take an execution trace and then a CPU profile of k6, each -profile-for long, -profile-from into its run (files k6-*.pprof / k6-*.trace in -out)")
	flag.DurationVar(&s.profileFrom, "profile-from", 0, "when the trace of -profile-at begins, from k6's start (0: a third of -duration)")
	flag.DurationVar(&s.profileFor, "profile-for", 5*time.Second, "how long the trace and the profile of -profile-at each last")
	flag.IntVar(&s.runs, "runs", 1, "runs of every client at every level, interleaved; with more than one, the ratios to the floor are printed as the median of the runs and their range")
	flag.BoolVar(&s.rejoin, "rejoin", false, "run nothing: join the traces and client lines an earlier run left in -out (same -levels, -shapes, -clients) and print its tables again")
	flag.BoolVar(&s.brief, "brief", false, "with -check: print one verdict line per client, level and shape instead of the tables")
	flag.StringVar(&s.counts, "counts", "", "with -check: append \"passed N failed N skipped 0\" (the checks) to this file")
	flag.BoolVar(&s.checkReuse, "check-reuse", false, "with -check: also fail when a client opened more connections than streams + 2 + 2 % of its answers")
	flag.StringVar(&s.http, "http", "", "the k6 client's http option (1.1, 2, auto; default: the client's own); with 2 the floor speaks h2c too, -streams-per-vu streams to a connection as a VU's share one")
	flag.DurationVar(&s.startSpread, "start-spread", 0, "spread the k6 VUs' starts over this long instead of starting them together, and the floor's goroutines alike, -streams-per-vu at a time")
	flag.BoolVar(&s.tls, "tls", false, "llm-sim serves HTTPS with a self-signed certificate, k6 and the floor over HTTP/1.1 with verification skipped: "+
		"each new connection's TLS handshake is then in its TTFT, as against a real provider")
	flag.Parse()
	var err error
	if s.levels, err = ints(*levels); err != nil {
		fatal(fmt.Errorf("-levels: %w", err))
	}
	s.shapes, s.clients = strings.Split(*shapes, ","), strings.Split(*clients, ",")
	for _, sh := range s.shapes {
		if sh != "staggered" && sh != "uniform" {
			fatal(fmt.Errorf("-shapes: unknown shape %q (staggered, uniform)", sh))
		}
	}
	if s.runs < 1 {
		fatal(fmt.Errorf("-runs: %d is not a positive count", s.runs))
	}
	if s.tls && s.http != "" && s.http != "1.1" {
		fatal(fmt.Errorf("-tls with -http %s: over TLS both clients speak HTTP/1.1 (the floor has no HTTP/2 over TLS)", s.http))
	}
	s.k6Bins = map[string]string{"k6": s.k6}
	for i, c := range s.clients {
		if name, path, ok := strings.Cut(c, "="); ok && name != "bare" && name != "" && path != "" {
			s.k6Bins[name], s.clients[i] = path, name
			continue
		}
		if c != "k6" && c != "bare" {
			fatal(fmt.Errorf("-clients: unknown client %q (k6, bare, NAME=PATH)", c))
		}
		if c == "bare" && s.bare == "" && !s.rejoin {
			fatal(fmt.Errorf("-bare: the bareclient binary is needed for client bare"))
		}
	}
	return s
}

// runAll runs (or, with -rejoin, joins again) every client at every level
// of every shape, -runs times, interleaved, printing each run's line or
// verdict; failures counts the runs whose checks failed.
func (s settings) runAll() (results []result, failures int) {
	run := s.run
	if s.rejoin {
		run = s.joinAgain
	}
	for _, shape := range s.shapes {
		for _, n := range s.levels {
			for k := 1; k <= s.runs; k++ {
				for _, c := range s.clients {
					r, err := run(shape, c, n, k)
					if err != nil {
						fatal(fmt.Errorf("%s %s %d streams: %w", shape, c, n, err))
					}
					results = append(results, r)
					if s.check && s.brief {
						if !s.verdict(r, k) {
							failures++
						}
						continue
					}
					fmt.Fprintf(os.Stderr, "accuracy: %s %s %d streams%s: %d answers, %d joined, TTFT error p50 %.2f ms\n",
						shape, c, n, s.runLabel(k), r.e.calls, r.e.joined, distOf(r.e.ttft).p50)
					if s.check {
						problems := s.problems(r)
						for _, p := range problems {
							fmt.Fprintf(os.Stderr, "accuracy: CHECK FAILED: %s %s %d streams: %s\n", shape, c, n, p)
						}
						if len(problems) > 0 {
							failures++
						}
					}
				}
			}
		}
	}
	return results, failures
}

// verdict prints one line for a run under -check -brief: ok or FAIL, what was
// checked and, on a failure, every problem; it reports whether the run passed.
func (s settings) verdict(r result, run int) bool {
	e := r.e
	what := fmt.Sprintf("%s, %s answers, %d stream%s%s", r.client, r.shape, r.streams, plural(r.streams), s.runLabel(run))
	problems := s.problems(r)
	if len(problems) > 0 {
		fmt.Printf("FAIL %s: %s\n", what, strings.Join(problems, "; "))
		return false
	}
	d := distOf(e.ttft)
	reuse := ""
	if s.checkReuse {
		reuse = fmt.Sprintf("; %d connection%s (at most %d allowed: reused)", r.connections, plural(r.connections), r.streams+2+e.calls/50)
	}
	fmt.Printf("ok   %s: all %d answers joined llm-sim's trace; TTFT error (client − server) p50 %.2f ms, max %.1f ms%s\n",
		what, e.calls, d.p50, d.max, reuse)
	return true
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "accuracy:", err)
	os.Exit(1)
}

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive count", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// problems are the bounds a loaded 2-core machine always meets: every answer
// finished and joined, and the TTFT error finite and positive (the client's t0
// precedes the server's arrival and its first-token time follows the
// server's write; -0.5 ms allows for wall-clock slewing).
func (s settings) problems(r result) []string {
	var p []string
	e := r.e
	if e.calls == 0 {
		p = append(p, "no answer")
	}
	if e.failed > 0 {
		p = append(p, fmt.Sprintf("%d answers failed", e.failed))
	}
	if e.joined != e.calls-e.failed {
		p = append(p, fmt.Sprintf("%d of %d answers joined the trace", e.joined, e.calls-e.failed))
	}
	if e.gapCountMismatch > 0 {
		p = append(p, fmt.Sprintf("%d answers had a different number of gaps than the server's chunks", e.gapCountMismatch))
	}
	for _, v := range e.ttft {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < -0.5 || v > 60_000 {
			p = append(p, fmt.Sprintf("TTFT error %.3f ms is not a sane positive figure", v))
			break
		}
	}
	if r.shape == "staggered" && e.joined >= 10 && e.minTokens == e.maxTokens {
		p = append(p, fmt.Sprintf("every answer was %d tokens long: the staggered shape's lengths did not vary (does the client send a seed per call?)", e.minTokens))
	}
	if d := distOf(e.ttft); !(d.p50 > 0) {
		p = append(p, fmt.Sprintf("median TTFT error %.3f ms is not positive", d.p50))
	}
	// Every stream's first call opens a connection; a drain cut by its time
	// bound on a starved machine may close a few more, a client that does not
	// reuse connections closes one on most calls (before the stream read to
	// EOF: 71 for 50 streams and 400 answers here).
	if allowed := r.streams + 2 + e.calls/50; s.checkReuse && r.connections > allowed {
		p = append(p, fmt.Sprintf("%d connections for %d streams and %d answers (allowed %d): connections are not reused", r.connections, r.streams, e.calls, allowed))
	}
	return p
}

// simArgs is llm-sim for a shape: -decode-ms per token, -ttft-ms before the
// first, lengths per shape.
func (s settings) simArgs(shape, trace string) []string {
	args := []string{"--model", "sim-accuracy=fast", "--seed", "1", "--trace", trace,
		"--set", fmt.Sprint("decode_base_ms=", s.decodeMs), "--fault", fmt.Sprintf("ttft=%g:1", s.ttftMs)}
	if shape == "staggered" {
		mean := float64(s.minTokens+s.maxTokens) / 2
		args = append(args, "--set", "output_dist=uniform", "--set", fmt.Sprint("output_min_tokens=", s.minTokens),
			"--set", fmt.Sprint("output_mean_tokens=", mean))
	}
	if s.tls {
		args = append(args, "--tls")
	}
	return args
}

// name is a run's file prefix in -out.
func (s settings) name(shape, client string, streams, run int) string {
	if s.runs == 1 {
		return fmt.Sprintf("%s-%s-%d", shape, client, streams)
	}
	return fmt.Sprintf("%s-%s-%d-r%d", shape, client, streams, run)
}

// runLabel is " (run K)" when there are several runs.
func (s settings) runLabel(run int) string {
	if s.runs == 1 {
		return ""
	}
	return fmt.Sprintf(" (run %d)", run)
}

// run starts a fresh llm-sim, runs one client against it and joins.
func (s settings) run(shape, client string, streams, run int) (result, error) {
	r := result{shape: shape, client: client, streams: streams, run: run}
	name := s.name(shape, client, streams, run)
	trace := filepath.Join(s.out, name+"-trace.jsonl")
	lines := filepath.Join(s.out, name+"-client.jsonl")
	simLog, err := os.Create(filepath.Join(s.out, name+"-llm-sim.log")) // #nosec G304 -- a file in the benchmark's output directory
	if err != nil {
		return r, err
	}
	defer simLog.Close()
	sim, err := harness.StartSim(s.sim, simLog, s.simArgs(shape, trace)...)
	if err != nil {
		return r, err
	}
	stopped := false
	defer func() {
		if !stopped {
			sim.Stop()
		}
	}()
	cmd := s.clientCommand(client, streams, sim.BaseURL, lines)
	var profiled chan error
	if client != "bare" && streams == s.profileAt {
		if profiled, err = s.profile(cmd, name); err != nil {
			return r, err
		}
	}
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Run(); err != nil {
		return r, fmt.Errorf("%s: %w\n%s", client, err, tail(stderr.String()))
	}
	if profiled != nil {
		if err := <-profiled; err != nil {
			return r, fmt.Errorf("profile of k6: %w", err)
		}
	}
	if u := cmd.ProcessState.SysUsage(); u != nil {
		r.clientCPU = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	}
	conns, err := harness.SimMetric(context.Background(), sim.BaseURL, "llmsim_connections_accepted_total")
	if err != nil {
		return r, err
	}
	r.connections = int(conns)
	r.simCPU, _ = harness.CPUSeconds(sim.Cmd.Process.Pid)
	sim.Stop() // flushes and closes the trace
	stopped = true
	r.e, err = join(trace, lines)
	if err != nil {
		return r, err
	}
	// The metrics scrape above is one connection of its own.
	r.connections--
	return r, s.saveRun(name, r)
}

// clientCommand is the command of one client's run against baseURL: the
// floor (bareclient) or a k6 binary running bench/accuracy.js, each writing
// its answers' lines to lines.
func (s settings) clientCommand(client string, streams int, baseURL, lines string) *exec.Cmd {
	var cmd *exec.Cmd
	switch client {
	case "bare":
		// #nosec G204 -- the benchmark starts its own binaries with its own flags
		cmd = exec.Command(s.bare, "-url", baseURL, "-model", "sim-accuracy", "-vus", fmt.Sprint(streams),
			"-duration", s.duration.String(), "-max-tokens", fmt.Sprint(s.maxTokens), "-finish-open", "-seed-per-request", "-requests-out", lines)
		cmd.Args = append(cmd.Args, "-conn-streams", fmt.Sprint(s.streamsPerVU), "-start-spread", s.startSpread.String())
		if s.http == "2" {
			cmd.Args = append(cmd.Args, "-http", "2")
		}
		if s.tls {
			cmd.Args = append(cmd.Args, "-tls-insecure")
		}
	default:
		httpVersion := s.http
		if s.tls {
			httpVersion = "1.1" // as the floor: k6 would otherwise take HTTP/2 by ALPN
		}
		// #nosec G204 -- the benchmark starts its own binaries with its own flags
		cmd = exec.Command(s.k6Bins[client], "run", "-q", "--no-usage-report", "--summary-mode=disabled", "--no-thresholds",
			"--log-format", "raw", "--console-output", lines,
			"-e", "LLM_BASE_URL="+baseURL, "-e", fmt.Sprint("STREAMS=", streams),
			"-e", fmt.Sprint("STREAMS_PER_VU=", s.streamsPerVU), "-e", fmt.Sprint("DURATION_MS=", s.duration.Milliseconds()),
			"-e", fmt.Sprint("MAX_TOKENS=", s.maxTokens), "-e", "LLM_HTTP="+httpVersion,
			"-e", fmt.Sprint("START_SPREAD_MS=", s.startSpread.Milliseconds()), "bench/accuracy.js")
		if s.tls {
			runFlags(cmd, "--insecure-skip-tls-verify")
		}
	}
	return cmd
}

// profile asks k6 (cmd, not started yet) to serve its profiles, and takes an
// execution trace and then a CPU profile of it -profile-from into the run;
// the channel says whether the trace was taken.
func (s settings) profile(cmd *exec.Cmd, name string) (chan error, error) {
	port, err := harness.FreePort()
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	runFlags(cmd, "--address", addr, "--profiling-enabled")
	profiled := make(chan error, 1)
	go func() {
		from := s.profileFrom
		if from == 0 {
			from = s.duration / 3
		}
		time.Sleep(from)
		base := "http://" + addr + "/debug/pprof/"
		secs := fmt.Sprintf("?seconds=%d", max(1, int(s.profileFor.Seconds())))
		err := harness.Fetch(context.Background(), base+"trace"+secs, filepath.Join(s.out, "k6-"+name+".trace"))
		if err == nil {
			// A trace as long as the run leaves no time for the profile:
			// the trace is what was asked for first.
			if perr := harness.Fetch(context.Background(), base+"profile"+secs, filepath.Join(s.out, "k6-"+name+"-cpu.pprof")); perr != nil {
				fmt.Fprintf(os.Stderr, "accuracy: %s: no CPU profile of k6 (it ended first?): %v\n", name, perr)
			}
		}
		profiled <- err
	}()
	return profiled, nil
}

// runFlags puts flags right after "k6 run", before the script and its -e
// options.
func runFlags(cmd *exec.Cmd, flags ...string) {
	cmd.Args = slices.Insert(cmd.Args, 2, flags...)
}

// runFacts are the figures of a run that its files do not hold, kept beside
// them (NAME-run.json) for -rejoin.
type runFacts struct {
	ClientCPU   float64 `json:"clientCPU"`
	SimCPU      float64 `json:"simCPU"`
	Connections int     `json:"connections"`
}

func (s settings) saveRun(name string, r result) error {
	b, err := json.Marshal(runFacts{ClientCPU: r.clientCPU, SimCPU: r.simCPU, Connections: r.connections})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(s.out, name+"-run.json"), b, 0o600)
}

// joinAgain is run for -rejoin: the files of an earlier run, joined again.
// A run older than its -run.json file shows 0 CPU seconds and connections.
func (s settings) joinAgain(shape, client string, streams, run int) (result, error) {
	r := result{shape: shape, client: client, streams: streams, run: run}
	name := s.name(shape, client, streams, run)
	var f runFacts
	if b, err := os.ReadFile(filepath.Join(s.out, name+"-run.json")); err == nil { // #nosec G304 -- a file in the benchmark's output directory
		if err := json.Unmarshal(b, &f); err != nil {
			return r, fmt.Errorf("%s-run.json: %w", name, err)
		}
	}
	r.clientCPU, r.simCPU, r.connections = f.ClientCPU, f.SimCPU, f.Connections
	var err error
	r.e, err = join(filepath.Join(s.out, name+"-trace.jsonl"), filepath.Join(s.out, name+"-client.jsonl"))
	return r, err
}

func tail(s string) string {
	if len(s) > 2000 {
		return "…" + s[len(s)-2000:]
	}
	return s
}
