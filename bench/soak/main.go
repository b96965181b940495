// Command soak runs the soak of scripts/soak.sh: k6 with this module keeps
// -vus streams open against llm-sim, which injects faults into -fault-rate of
// the requests (disconnects, stalls past the idle timeout, 500s, in-stream
// errors), for -duration. Every -every it samples the k6 process: resident
// memory (/proc/PID/status), live Go heap and goroutines (k6's REST API with
// --profiling-enabled: the heap profile's inuse_space after a forced GC), and
// CPU; it prints one row per sample and, at the end, compares the last third
// of the run with the first (after warm-up), or with -max-heap-growth fits
// slopes after -warmup. The live heap is split by the heap profile's stacks
// into k6's Trend sample store (k6 keeps every Trend sample for its summary
// and thresholds, and grows by 8 bytes for each whatever the client does) and
// everything else (the module, k6, goja…), which must stay flat; the store's
// growth is set next to what k6 was given (the Trend samples it counted) and
// bounded per output token. The figures of a client that leaks grow with the
// number of answers or tokens; a sound one stays flat.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/llmstream/xk6-llmstream/bench/internal/harness"
)

type sample struct {
	at         time.Duration
	rssMB      float64
	heapMB     float64 // live heap: all of it
	trendMB    float64 // of which k6's Trend sample store
	goroutines int
	cpuPercent float64 // k6's CPU over the interval before this sample, % of one core
	simPercent float64 // llm-sim's, likewise
	load1      string  // the machine's 1-minute load average: other jobs share it
}

type summary struct {
	DurationSec  float64            `json:"durationSec"`
	Requests     float64            `json:"requests"`
	Failed       float64            `json:"failed"`
	OutputTokens float64            `json:"outputTokens"`
	Errors       map[string]float64 `json:"errors"`
	// TrendSamples is how many samples k6 kept of each Trend metric.
	TrendSamples map[string]float64 `json:"trendSamples"`
}

// trendRates are the Trend samples a second k6 was given over the run: the
// module's (llm_*) and k6's own (http_req_*, iteration_duration…).
func (s summary) trendRates() (module, k6 float64) {
	for name, n := range s.TrendSamples {
		if strings.HasPrefix(name, "llm_") {
			module += n
		} else {
			k6 += n
		}
	}
	d := max(s.DurationSec, 1)
	return module / d, k6 / d
}

func main() {
	k6 := flag.String("k6", "./k6", "k6 binary with the module")
	simBin := flag.String("sim", "./llm-sim", "llm-sim binary")
	duration := flag.Duration("duration", 10*time.Minute, "length of the soak")
	every := flag.Duration("every", 15*time.Second, "sampling interval")
	vus := flag.Int("vus", 200, "concurrent streams")
	maxTokens := flag.Int("max-tokens", 256, "max_tokens of every request")
	faultRate := flag.Float64("fault-rate", 0.01, "share of requests that get a fault, split evenly over the fault kinds")
	decodeMs := flag.Float64("decode-ms", 20, "llm-sim decode step (ms): one token per stream per step")
	gapSamples := flag.String("gap-samples", "request", "the client's gapSamples ('default' leaves it unset: the module's default)")
	maxGrowth := flag.Float64("max-heap-growth", 0, "judge by slope: fail when k6's live heap other than its Trend sample store grows faster than this many MB/min after -warmup (0: compare the first and last thirds)")
	maxTrendPerToken := flag.Float64("max-trend-per-token", 0, "with -max-heap-growth: also fail when k6's Trend sample store grows by more than this many bytes per output token (0: no bound)")
	warmup := flag.Duration("warmup", 30*time.Second, "with -max-heap-growth: samples before this are left out of the slope")
	memProfileRate := flag.Int("memprofilerate", 64<<10, "k6's runtime.MemProfileRate (GODEBUG=memprofilerate): bytes allocated per heap profile sample (0: Go's 512 KiB)")
	out := flag.String("out", os.TempDir(), "directory for the summary and llm-sim's log")
	trace := flag.Bool("trace", false, "have llm-sim write its ground truth (every chunk's write time) and report its longest pauses")
	flag.Parse()
	j := judgement{maxGrowth: *maxGrowth, maxTrendPerToken: *maxTrendPerToken, warmup: *warmup, memProfileRate: *memProfileRate}
	if err := soak(*k6, *simBin, *out, *gapSamples, *duration, *every, *vus, *maxTokens, *faultRate, *decodeMs, *trace, j); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

// faultKinds are the faults of the soak; each gets faultRate/len(faultKinds).
// The stall outlasts soak.js's 1 s idle timeout, so it ends as timeout_idle.
var faultKinds = []string{"disconnect@40", "stall=3000@20", "status=500", "error@60"} //nolint:gochecknoglobals // fixed table

// soakIdleTimeout is soak.js's idle timeout.
const soakIdleTimeout = time.Second

func soak(k6, simBin, out, gapSamples string, duration, every time.Duration, vus, maxTokens int, faultRate, decodeMs float64, trace bool, j judgement) error {
	simLog, err := os.Create(filepath.Join(out, "llm-sim.log")) // #nosec G304 -- a file in the benchmark's output directory
	if err != nil {
		return err
	}
	defer simLog.Close()
	tracePath := filepath.Join(out, "llm-sim-trace.jsonl")
	args, faults := simArgs(faultRate, decodeMs, trace, tracePath)
	sim, err := harness.StartSim(simBin, simLog, args...)
	if err != nil {
		return err
	}
	defer sim.Stop()

	port, err := harness.FreePort()
	if err != nil {
		return err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	summaryPath := filepath.Join(out, "soak-summary.json")
	_ = os.Remove(summaryPath)
	cmd := exec.Command(k6, "run", "-q", "--no-usage-report", "--address", addr, "--profiling-enabled", // #nosec G204 -- the benchmark starts its own binaries with its own flags
		"-e", "LLM_BASE_URL="+sim.BaseURL, "-e", fmt.Sprint("VUS=", vus), "-e", "DURATION="+duration.String(),
		"-e", fmt.Sprint("MAX_TOKENS=", maxTokens), "-e", "GAP_SAMPLES="+gapSamples, "-e", "SUMMARY_FILE="+summaryPath,
		"bench/soak.js")
	cmd.Stderr = os.Stderr
	if j.memProfileRate > 0 {
		// At Go's 512 KiB, a Trend slice of a few hundred KB (a short run's)
		// is in the profile or not by chance, and the split jumps by its
		// size; at 64 KiB it is there with its weight. It costs a stack
		// walk per 64 KiB allocated, a few thousand a second here.
		cmd.Env = append(os.Environ(), withGODEBUG(os.Getenv("GODEBUG"), fmt.Sprint("memprofilerate=", j.memProfileRate)))
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	fmt.Printf("soak: %d streams of up to %d tokens, %s, llm-sim %s (decode step %g ms), faults %s, gapSamples=%s\n",
		vus, maxTokens, duration, sim.BaseURL, decodeMs, strings.Join(faults, " "), gapSamples)
	fmt.Printf("k6 pid %d, REST API %s; one row every %s\n\n", cmd.Process.Pid, addr, every)
	fmt.Printf("%8s %9s %13s %9s %9s %11s %9s %10s %6s\n", "time", "RSS MB", "live heap MB", "Trend MB", "other MB",
		"goroutines", "k6 CPU %", "sim CPU %", "load")

	samples, runErr := sampleUntilExit(cmd.Process.Pid, sim.Cmd.Process.Pid, addr, every, exited)
	if runErr != nil {
		return fmt.Errorf("k6: %w", runErr)
	}
	s, err := readSummary(summaryPath)
	if err != nil {
		return err
	}
	fmt.Printf("\nk6: %.0f answers in %.0fs, %.0f failed (%.2f%%), %.0f output tokens; errors %v\n",
		s.Requests, s.DurationSec, s.Failed, 100*s.Failed/max(s.Requests, 1), s.OutputTokens, s.Errors)
	if trace {
		sim.Stop() // flushes the trace
		if err := serverGaps(tracePath, soakIdleTimeout); err != nil {
			return err
		}
	}
	if j.maxGrowth > 0 {
		return j.slope(samples, s)
	}
	return judge(samples)
}

// simArgs are llm-sim's flags: the soak's model, the faults (faultRate
// shared among faultKinds, listed for the header) and the trace when asked.
func simArgs(faultRate, decodeMs float64, trace bool, tracePath string) (args, faults []string) {
	args = []string{"--model", "sim-soak=fast", "--seed", "1", "--set", fmt.Sprint("decode_base_ms=", decodeMs)}
	for _, f := range faultKinds {
		if faultRate <= 0 {
			break
		}
		spec := fmt.Sprintf("%s:%g", f, faultRate/float64(len(faultKinds)))
		faults = append(faults, spec)
		args = append(args, "--fault", spec)
	}
	if trace {
		args = append(args, "--trace", tracePath)
	}
	return args, faults
}

// readSummary reads what soak.js wrote of k6's summary at the end.
func readSummary(path string) (summary, error) {
	var s summary
	b, err := os.ReadFile(path) // #nosec G304 -- a file in the benchmark's output directory
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("summary %q: %w", b, err)
	}
	return s, nil
}

// judgement is how the run is judged: by slopes after warm-up when maxGrowth
// (MB/min) is set, else by comparing thirds.
type judgement struct {
	maxGrowth        float64 // MB/min, the live heap but k6's Trend sample store
	maxTrendPerToken float64 // bytes per output token, k6's Trend sample store
	warmup           time.Duration
	memProfileRate   int
}

// trendSampleBytes is what k6 keeps per Trend sample: one float64.
const trendSampleBytes = 8

// slope fits lines (least squares) over the samples after warm-up to the
// live heap, its two parts and RSS. Everything but k6's Trend sample store
// must be flat: a client that keeps anything per token or per call grows it
// in proportion to the run. The store grows by what k6 keeps per Trend
// sample; it is printed next to the samples k6 was given, and bounded per
// output token, which a client sending a Trend sample per token (8 bytes and
// more) fails.
func (j judgement) slope(samples []sample, s summary) error {
	var at, heap, trend, other, rss []float64
	for _, x := range samples {
		if x.at >= j.warmup {
			at, heap, rss = append(at, x.at.Minutes()), append(heap, x.heapMB), append(rss, x.rssMB)
			trend, other = append(trend, x.trendMB), append(other, x.heapMB-x.trendMB)
		}
	}
	if len(at) < 4 {
		return fmt.Errorf("%d samples after the %s warm-up: too few to judge (run longer or sample more often)", len(at), j.warmup)
	}
	tokensPerSec := s.OutputTokens / max(s.DurationSec, 1)
	callsPerSec := s.Requests / max(s.DurationSec, 1)
	perToken := func(mbPerMin float64) float64 { return mbPerMin * (1 << 20) / 60 / max(tokensPerSec, 1) }
	h, t, o, r := fit(at, heap), fit(at, trend), fit(at, other), fit(at, rss)
	modRate, k6Rate := s.trendRates()
	given := (modRate + k6Rate) * trendSampleBytes * 60 / (1 << 20)
	fmt.Printf("\nafter %s of warm-up (%d samples), %.0f output tokens/s, %.1f calls/s:\n", j.warmup, len(at), tokensPerSec, callsPerSec)
	fmt.Printf("  everything but the Trend store (module, k6, goja…): %+.2f MB/min (%.2f B per output token)\n", o, perToken(o))
	fmt.Printf("  k6's Trend sample store:                            %+.2f MB/min (%.2f B per output token)\n", t, perToken(t))
	fmt.Printf("    k6 was given %.0f Trend samples/s (module's llm_* %.0f, k6's own %.0f; %.1f per call, %.3f per output token)\n",
		modRate+k6Rate, modRate, k6Rate, (modRate+k6Rate)/max(callsPerSec, 1e-9), (modRate+k6Rate)/max(tokensPerSec, 1))
	fmt.Printf("    × %d B = %+.2f MB/min: the store grew %.2f× that (a growing slice holds up to 1.25× its samples)\n",
		trendSampleBytes, given, t/max(given, 1e-9))
	fmt.Printf("  live heap in all: %+.2f MB/min; RSS %+.2f MB/min\n", h, r)
	var failed []string
	if o > j.maxGrowth {
		failed = append(failed, fmt.Sprintf("k6's live heap but its Trend store grew %.2f MB/min after warm-up (allowed %.1f)", o, j.maxGrowth))
	}
	if j.maxTrendPerToken > 0 && perToken(t) > j.maxTrendPerToken {
		failed = append(failed, fmt.Sprintf("k6's Trend sample store grew %.2f B per output token (allowed %.2f): a Trend sample per token?",
			perToken(t), j.maxTrendPerToken))
	}
	for _, f := range failed {
		fmt.Println("  GROWING:", f)
	}
	if len(failed) > 0 {
		return errors.New(strings.Join(failed, "; "))
	}
	bound := ""
	if j.maxTrendPerToken > 0 {
		bound = fmt.Sprintf(", the Trend store within %.2f B per output token", j.maxTrendPerToken)
	}
	fmt.Printf("  flat: everything but the Trend store within the allowed %.1f MB/min%s\n", j.maxGrowth, bound)
	return nil
}

// withGODEBUG adds setting to a GODEBUG value.
func withGODEBUG(current, setting string) string {
	if current == "" {
		return "GODEBUG=" + setting
	}
	return "GODEBUG=" + current + "," + setting
}

// fit is the least-squares slope of y over x.
func fit(x, y []float64) float64 {
	n := float64(len(x))
	var sx, sy, sxx, sxy float64
	for i := range x {
		sx, sy, sxx, sxy = sx+x[i], sy+y[i], sxx+x[i]*x[i], sxy+x[i]*y[i]
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / d
}

// sampleUntilExit samples k6 every interval until it exits; a sample that
// fails (REST API not up yet, k6 ending) is skipped.
func sampleUntilExit(pid, simPid int, addr string, every time.Duration, exited <-chan error) ([]sample, error) {
	start := time.Now()
	tick := time.NewTicker(every)
	defer tick.Stop()
	var samples []sample
	lastCPU, _ := harness.CPUSeconds(pid)
	lastSimCPU, _ := harness.CPUSeconds(simPid)
	lastAt := start
	for {
		select {
		case err := <-exited:
			return samples, err
		case now := <-tick.C:
			ctx, cancel := context.WithTimeout(context.Background(), max(every, 10*time.Second)) // a starved k6 answers slowly
			rt, err := harness.ReadK6Runtime(ctx, addr, false)
			var h heapSplit
			if err == nil {
				var p *profile.Profile
				var idx int
				if p, idx, err = harness.K6HeapProfile(ctx, addr); err == nil {
					h = splitHeap(p, idx)
				}
			}
			cancel()
			rss, rssErr := harness.RSSMB(pid)
			cpu, cpuErr := harness.CPUSeconds(pid)
			simCPU, simErr := harness.CPUSeconds(simPid)
			if err != nil || rssErr != nil || cpuErr != nil || simErr != nil {
				continue
			}
			interval := now.Sub(lastAt).Seconds()
			s := sample{
				at: now.Sub(start).Round(time.Second), rssMB: rss,
				heapMB: float64(h.total) / (1 << 20), trendMB: float64(h.trend) / (1 << 20),
				goroutines: rt.Goroutines, cpuPercent: 100 * (cpu - lastCPU) / interval,
				simPercent: 100 * (simCPU - lastSimCPU) / interval, load1: loadAverage(),
			}
			lastCPU, lastSimCPU, lastAt = cpu, simCPU, now
			samples = append(samples, s)
			fmt.Printf("%8s %9.1f %13.1f %9.1f %9.1f %11d %9.0f %10.0f %6s\n",
				s.at, s.rssMB, s.heapMB, s.trendMB, s.heapMB-s.trendMB, s.goroutines, s.cpuPercent, s.simPercent, s.load1)
		}
	}
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	first, _, _ := strings.Cut(string(b), " ")
	return first
}

// judge compares the medians of the last third of the samples with those of
// the first third after the first sample (warm-up): growth past the
// tolerances is reported as a failure.
func judge(samples []sample) error {
	if len(samples) < 7 {
		fmt.Println("too few samples to judge flatness (run longer or sample more often)")
		return nil
	}
	body := samples[1:]
	third := len(body) / 3
	first, last := body[:third], body[len(body)-third:]
	med := func(ss []sample, f func(sample) float64) float64 {
		v := make([]float64, len(ss))
		for i, s := range ss {
			v[i] = f(s)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	checks := []struct {
		name string
		f    func(sample) float64
		// allowed growth: ratio and absolute slack (noise of a sample taken
		// at a random moment of 200 streams starting and ending)
		ratio, slack float64
	}{
		{"RSS MB", func(s sample) float64 { return s.rssMB }, 1.25, 10},
		{"live heap MB", func(s sample) float64 { return s.heapMB }, 1.5, 4},
		{"goroutines", func(s sample) float64 { return float64(s.goroutines) }, 1.1, 50},
	}
	fmt.Printf("\nmedian of the first third (after %s) vs the last third:\n", samples[0].at)
	growing := false
	for _, c := range checks {
		a, b := med(first, c.f), med(last, c.f)
		verdict := "flat"
		if b > a*c.ratio+c.slack {
			verdict = "GROWING"
			growing = true
		}
		fmt.Printf("  %-13s %9.1f → %9.1f  %s (allowed: ×%.2f + %g)\n", c.name, a, b, verdict, c.ratio, c.slack)
	}
	if growing {
		return fmt.Errorf("memory or goroutines grew over the run")
	}
	return nil
}
