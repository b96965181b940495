// Command loopback runs the loopback benchmark of scripts/bench.sh: k6 with this
// module and bench/bareclient read 1000-token answers from llm-sim's zero-delay
// model, side by side: every round runs each client once for the same duration
// (the order rotates every round), and every run reports output tokens/s, the
// client's CPU time (from the kernel's rusage of the finished process) and
// llm-sim's CPU time during the run (both share the machine's cores).
//
// With -profile-seconds it then profiles k6's CPU during one more run of each
// -profile-clients and splits the samples by who spends them (see split.go):
// side by side in µs per call, a call's extra cost over k6/http's by part.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/llmstream/xk6-llmstream/bench/internal/harness"
)

// run is one client's run: the summary line the client printed plus the
// resource figures measured around it.
type run struct {
	Client       string  `json:"client"`
	Round        int     `json:"round"`
	DurationSec  float64 `json:"durationSec"`
	Requests     float64 `json:"requests"`
	Failed       float64 `json:"failed"`
	OutputTokens float64 `json:"outputTokens"`
	TokensPerSec float64 `json:"tokensPerSec"`
	ClientCPU    float64 `json:"clientCpuSec"`
	SimCPU       float64 `json:"simCpuSec"`
	MaxRSSMB     float64 `json:"maxRssMB"`
}

func (r run) tokensPerCPUSec() float64 { return r.OutputTokens / r.ClientCPU }

// callsPerSec and cpuPerCall are the per-call figures: with short answers a
// client's ceiling is what a call costs beyond its tokens.
func (r run) callsPerSec() float64 { return r.Requests / r.DurationSec }

func (r run) cpuPerCall() time.Duration {
	return time.Duration(r.ClientCPU / r.Requests * float64(time.Second))
}

type settings struct {
	k6, sim, bare, out string
	k6Base             string // another k6 build, for the base-* clients (a before/after comparison)
	rounds, vus        int
	maxTokens          int
	duration           time.Duration
	clients            []string
	profileSeconds     int
	profileRounds      int
	profileClients     []string
}

func main() {
	var s settings
	var clients string
	flag.StringVar(&s.k6, "k6", "./k6", "k6 binary with the module")
	flag.StringVar(&s.k6Base, "k6-base", "", "another k6 build (e.g. an earlier commit's) for the base-request and base-event clients")
	flag.StringVar(&s.sim, "sim", "./llm-sim", "llm-sim binary")
	flag.StringVar(&s.bare, "bare", "", "bareclient binary (built from bench/bareclient)")
	flag.StringVar(&s.out, "out", os.TempDir(), "directory for summaries, logs and the profile")
	flag.IntVar(&s.rounds, "rounds", 3, "rounds; each runs every client once")
	flag.IntVar(&s.vus, "vus", 50, "concurrent streams per client")
	flag.IntVar(&s.maxTokens, "max-tokens", 1000, "max_tokens of every request")
	flag.DurationVar(&s.duration, "duration", 30*time.Second, "length of each run")
	flag.StringVar(&clients, "clients", "bare,k6-request,k6-event", "clients to run: bare, k6-request (gapSamples: 'request'), k6-event ('event': every gap a sample), k6-sampled (the default 'sampled'), "+
		"k6-http (k6's own http.post of the same request, the body read whole), k6-http-async (the same with http.asyncRequest, awaited), base-request and base-event (the same with -k6-base); "+
		"embeddings at batch 1: bare-embed, extension-embed, k6-http-embed, base-embed")
	flag.IntVar(&s.profileSeconds, "profile-seconds", 0, "then profile k6 of each -profile-clients for this many seconds; 0 = no profile")
	flag.IntVar(&s.profileRounds, "profile-rounds", 1, "profile the -profile-clients in turn this many times, each for -profile-seconds, and add each client's profiles up")
	profileClients := flag.String("profile-clients", "k6-request", "the k6 clients to profile, one run each; several are printed side by side in CPU µs per call, "+
		"each beside the last (e.g. k6-event,k6-http)")
	splitOnly := flag.String("split", "", "only print the CPU split of this k6 profile (with -k6, the binary it was taken from)")
	flag.Parse()
	if *splitOnly != "" {
		sp, err := splitProfile(s.k6, *splitOnly)
		if err == nil {
			err = printShares(os.Stdout, sp)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "loopback:", err)
			os.Exit(1)
		}
		return
	}
	s.clients, s.profileClients = strings.Split(clients, ","), strings.Split(*profileClients, ",")
	if err := s.main(); err != nil {
		fmt.Fprintln(os.Stderr, "loopback:", err)
		os.Exit(1)
	}
}

func (s *settings) main() error {
	simLog, err := os.Create(filepath.Join(s.out, "llm-sim.log"))
	if err != nil {
		return err
	}
	defer simLog.Close()
	sim, err := harness.StartSim(s.sim, simLog, "--model", "sim-fast=fast", "--seed", "1")
	if err != nil {
		return err
	}
	defer sim.Stop()
	fmt.Printf("llm-sim (fast: zero delays) at %s; %d streams of %d tokens, %s per run, %d rounds\n",
		sim.BaseURL, s.vus, s.maxTokens, s.duration, s.rounds)

	var runs []run
	for round := 1; round <= s.rounds; round++ {
		for i := range s.clients {
			// Rotate so no client always runs first (cold) or last.
			client := s.clients[(i+round-1)%len(s.clients)]
			r, err := s.runOnce(sim, client, round)
			if err != nil {
				return err
			}
			fmt.Printf("  round %d %-11s %8.0f tokens/s  %6.0f calls/s  %3.0f failed  client CPU %5.1fs  sim CPU %5.1fs\n",
				r.Round, r.Client, r.TokensPerSec, r.callsPerSec(), r.Failed, r.ClientCPU, r.SimCPU)
			runs = append(runs, r)
		}
	}
	if len(runs) > 0 {
		report(runs)
		if err := writeJSONLines(filepath.Join(s.out, "runs.jsonl"), runs); err != nil {
			return err
		}
	}
	if s.profileSeconds > 0 {
		return s.profile(sim)
	}
	return nil
}

// runOnce runs one client for s.duration and measures it.
func (s *settings) runOnce(sim *harness.Sim, client string, round int) (run, error) {
	summary := filepath.Join(s.out, "summary.json")
	_ = os.Remove(summary)
	bare := func(extra ...string) *exec.Cmd {
		// #nosec G204 -- the benchmark starts its own binaries with its own flags
		return exec.Command(s.bare, append([]string{"-url", sim.BaseURL, "-model", "sim-fast", "-vus", fmt.Sprint(s.vus),
			"-duration", s.duration.String(), "-max-tokens", fmt.Sprint(s.maxTokens)}, extra...)...)
	}
	var cmd *exec.Cmd
	switch client {
	case "bare", "bare-embed":
		if cmd = bare(); client == "bare-embed" {
			cmd = bare("-embed")
		}
		f, err := os.Create(summary) // #nosec G304 -- a file in the benchmark's output directory
		if err != nil {
			return run{}, err
		}
		defer f.Close()
		cmd.Stdout = f
	default:
		var err error
		if cmd, err = s.k6Command(sim, client, "", summary); err != nil {
			return run{}, err
		}
	}
	cmd.Stderr = os.Stderr
	simBefore, err := harness.CPUSeconds(sim.Cmd.Process.Pid)
	if err != nil {
		return run{}, err
	}
	if err := cmd.Run(); err != nil {
		return run{}, fmt.Errorf("%s: %w", client, err)
	}
	simAfter, err := harness.CPUSeconds(sim.Cmd.Process.Pid)
	if err != nil {
		return run{}, err
	}
	r, err := readSummary(summary, client)
	if err != nil {
		return run{}, err
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	r.Client, r.Round = client, round
	r.ClientCPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	r.MaxRSSMB = float64(ru.Maxrss) / 1024 // Linux reports KiB
	r.SimCPU = simAfter - simBefore
	return r, nil
}

// readSummary reads the one JSON line a client's run printed.
func readSummary(path, client string) (run, error) {
	b, err := os.ReadFile(path) // #nosec G304 -- a file in the benchmark's output directory
	if err != nil {
		return run{}, err
	}
	var r run
	if err := json.Unmarshal(b, &r); err != nil {
		return run{}, fmt.Errorf("%s summary %q: %w", client, b, err)
	}
	return r, nil
}

// k6Command is the k6 run of a k6 client (every client but bare and
// bare-embed), with k6's REST API and profiling at restAddr unless it is "".
func (s *settings) k6Command(sim *harness.Sim, client, restAddr, summary string) (*exec.Cmd, error) {
	k6, script, gaps := s.k6, "", ""
	switch client {
	case "k6-request", "k6-event", "k6-sampled":
		script, gaps = "bench/k6-stream.js", strings.TrimPrefix(client, "k6-")
	case "k6-http", "k6-http-async", "k6-http-embed", "extension-embed":
		script = map[string]string{"k6-http": "bench/k6-http.js", "k6-http-async": "bench/k6-http-async.js", "k6-http-embed": "bench/k6-http-embed.js",
			"extension-embed": "bench/k6-embed.js"}[client]
	case "base-request", "base-event", "base-embed":
		if s.k6Base == "" {
			return nil, fmt.Errorf("client %q needs -k6-base", client)
		}
		k6, script, gaps = s.k6Base, "bench/k6-stream.js", strings.TrimPrefix(client, "base-")
		if client == "base-embed" {
			script, gaps = "bench/k6-embed.js", ""
		}
	default:
		return nil, fmt.Errorf("unknown client %q", client)
	}
	// #nosec G204 -- the benchmark starts its own binaries with its own flags
	return exec.Command(k6, s.k6Args(sim, script, gaps, restAddr, summary)...), nil
}

// k6Args runs a k6 script of bench/; restAddr "" turns k6's REST API off (several
// k6 may run on this machine at once and would fight over its default port).
func (s *settings) k6Args(sim *harness.Sim, script, gapSamples, restAddr, summary string) []string {
	args := []string{"run", "-q", "--no-usage-report"}
	if restAddr == "" {
		args = append(args, "--address", "")
	} else {
		args = append(args, "--address", restAddr, "--profiling-enabled")
	}
	return append(args,
		"-e", "LLM_BASE_URL="+sim.BaseURL, "-e", fmt.Sprint("VUS=", s.vus), "-e", "DURATION="+s.duration.String(),
		"-e", fmt.Sprint("MAX_TOKENS=", s.maxTokens), "-e", "GAP_SAMPLES="+gapSamples, "-e", "SUMMARY_FILE="+summary,
		script)
}

// readsTokens: k6/http reads no tokens and an embeddings call has none, so
// their runs have no tokens/s.
func (r run) readsTokens() bool {
	return !strings.HasPrefix(r.Client, "k6-http") && !strings.HasSuffix(r.Client, "-embed")
}

// httpPeer is the k6/http client a client's calls are held to: the one
// posting the same request.
func httpPeer(client string) string {
	if strings.HasSuffix(client, "-embed") {
		return "k6-http-embed"
	}
	return "k6-http"
}

func report(runs []run) {
	fmt.Println("\nper run:")
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "round\tclient\ttokens/s\tanswers\tcalls/s\tfailed\tclient CPU s\ttokens per client CPU s\tclient CPU µs per call\tsim CPU s\tmax RSS MB\t")
	for _, r := range runs {
		tps, tpc := "-", "-"
		if r.readsTokens() {
			tps, tpc = fmt.Sprintf("%.0f", r.TokensPerSec), fmt.Sprintf("%.0f", r.tokensPerCPUSec())
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%.0f\t%.0f\t%.0f\t%.1f\t%s\t%.0f\t%.1f\t%.0f\t\n",
			r.Round, r.Client, tps, r.Requests, r.callsPerSec(), r.Failed, r.ClientCPU, tpc,
			float64(r.cpuPerCall())/float64(time.Microsecond), r.SimCPU, r.MaxRSSMB)
	}
	_ = tw.Flush()
	tokenRatios(runs)
	callRatios(runs)
}

// tokenRatios prints each token-reading client's tokens/s and tokens per
// CPU second over the bare client's of the same round: neighbours in time
// share the machine's noise, distant runs do not.
func tokenRatios(runs []run) {
	ratios := map[string][][2]float64{}
	var names []string
	for _, r := range runs {
		if r.Client == "bare" || !r.readsTokens() {
			continue
		}
		i := slices.IndexFunc(runs, func(b run) bool { return b.Client == "bare" && b.Round == r.Round })
		if i < 0 {
			continue
		}
		if len(names) == 0 {
			fmt.Println("\nratio to the bare client of the same round (tokens/s, then tokens per client CPU second):")
		}
		b := runs[i]
		ratio := [2]float64{r.TokensPerSec / b.TokensPerSec, r.tokensPerCPUSec() / b.tokensPerCPUSec()}
		if _, seen := ratios[r.Client]; !seen {
			names = append(names, r.Client)
		}
		ratios[r.Client] = append(ratios[r.Client], ratio)
		fmt.Printf("  round %d %-11s %.2f  %.2f\n", r.Round, r.Client, ratio[0], ratio[1])
	}
	for _, name := range names {
		var tps, cpu []float64
		for _, r := range ratios[name] {
			tps, cpu = append(tps, r[0]), append(cpu, r[1])
		}
		fmt.Printf("  median %-10s %.2f  %.2f  (min %.2f, max %.2f tokens/s ratio)\n",
			name, median(tps), median(cpu), slices.Min(tps), slices.Max(tps))
	}
}

// callRatios prints, when a k6/http client ran, every client's median
// calls/s and CPU per call, and its calls/s and calls per CPU second over
// those of the k6/http client posting the same request in the same round.
func callRatios(runs []run) {
	if !slices.ContainsFunc(runs, func(r run) bool { return strings.HasPrefix(r.Client, "k6-http") }) {
		return
	}
	fmt.Println("\nper call, medians of the rounds; ratios to k6/http posting the same request in the same round:")
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "client\tcalls/s\tCPU µs per call\tcalls/s ÷ k6/http\t(min–max)\tcalls per CPU s ÷ k6/http\t")
	var names []string
	for _, r := range runs {
		if !slices.Contains(names, r.Client) {
			names = append(names, r.Client)
		}
	}
	for _, name := range names {
		var cps, cpu, speed, thrift []float64
		for _, r := range runs {
			if r.Client != name {
				continue
			}
			cps, cpu = append(cps, r.callsPerSec()), append(cpu, float64(r.cpuPerCall())/float64(time.Microsecond))
			i := slices.IndexFunc(runs, func(h run) bool { return h.Client == httpPeer(name) && h.Round == r.Round })
			if i >= 0 {
				h := runs[i]
				speed = append(speed, r.callsPerSec()/h.callsPerSec())
				thrift = append(thrift, float64(h.cpuPerCall())/float64(r.cpuPerCall()))
			}
		}
		ratio, spread, cpuRatio := "-", "", "-"
		if len(speed) > 0 {
			ratio, spread = fmt.Sprintf("%.2f", median(speed)), fmt.Sprintf("(%.2f–%.2f)", slices.Min(speed), slices.Max(speed))
			cpuRatio = fmt.Sprintf("%.2f", median(thrift))
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%s\t%s\t%s\t\n", name, median(cps), median(cpu), ratio, spread, cpuRatio)
	}
	_ = tw.Flush()
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func writeJSONLines(path string, runs []run) error {
	f, err := os.Create(path) // #nosec G304 -- the operator's path
	if err != nil {
		return err
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	for _, r := range runs {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}
