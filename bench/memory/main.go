// Command memory measures k6's memory per in-flight stream (scripts/memory.sh,
// make memory): for each level it starts llm-sim with the slow profile (one
// token per stream per second, so every stream stays open for -tokens
// seconds), starts k6 with bench/accuracy.js holding that many streams open
// (-streams-per-vu per VU, default client options), waits until llm-sim runs
// them all, then reads k6's live heap (HeapAlloc right after a forced GC, from
// its pprof endpoint: the streams make almost no garbage), RSS and goroutines
// five times, keeps the median and saves a heap profile (memory-N-heap.pprof
// in -out). The cost of one stream is the slope between levels.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/llmstream/xk6-llmstream/bench/internal/harness"
)

type level struct {
	streams, vus  int
	heapMB, rssMB float64
	goroutines    int
}

func main() {
	k6 := flag.String("k6", "./k6", "k6 binary with the module")
	simBin := flag.String("sim", "./llm-sim", "llm-sim binary")
	levelsFlag := flag.String("levels", "100,1000,5000", "streams held open, comma-separated")
	perVU := flag.Int("streams-per-vu", 50, "concurrent streams per k6 VU (1: one stream per VU)")
	tokens := flag.Int("tokens", 90, "tokens per answer: with the slow profile, seconds a stream stays open")
	out := flag.String("out", os.TempDir(), "directory for logs")
	flag.Parse()
	var levels []level
	for _, f := range strings.Split(*levelsFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			fatal(fmt.Errorf("-levels: %q is not a positive count", f))
		}
		l, err := measure(*k6, *simBin, *out, n, *perVU, *tokens)
		if err != nil {
			fatal(fmt.Errorf("%d streams: %w", n, err))
		}
		fmt.Fprintf(os.Stderr, "memory: %d streams (%d VUs): live heap %.1f MB, RSS %.1f MB, %d goroutines\n",
			l.streams, l.vus, l.heapMB, l.rssMB, l.goroutines)
		levels = append(levels, l)
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("\nk6 holding N streams open against llm-sim's slow profile, %d streams per VU, default client options; load average %s\n\n",
		*perVU, strings.Fields(string(load) + " ?")[0])
	fmt.Println("| streams | VUs | live heap MB | RSS MB | goroutines | live heap per stream vs the level before | goroutines per stream |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for i, l := range levels {
		slope, gslope := "—", "—"
		if i > 0 {
			p := levels[i-1]
			d := float64(l.streams - p.streams)
			slope = fmt.Sprintf("%.1f KB", (l.heapMB-p.heapMB)*1024/d)
			gslope = fmt.Sprintf("%.2f", float64(l.goroutines-p.goroutines)/d)
		}
		fmt.Printf("| %d | %d | %.1f | %.1f | %d | %s | %s |\n", l.streams, l.vus, l.heapMB, l.rssMB, l.goroutines, slope, gslope)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "memory:", err)
	os.Exit(1)
}

func measure(k6, simBin, out string, streams, perVU, tokens int) (level, error) {
	l := level{streams: streams, vus: (streams + perVU - 1) / perVU}
	simLog, err := os.Create(filepath.Join(out, fmt.Sprintf("memory-%d-llm-sim.log", streams))) // #nosec G304 -- a file in the benchmark's output directory
	if err != nil {
		return l, err
	}
	defer simLog.Close()
	sim, err := harness.StartSim(simBin, simLog, "--model", "sim-accuracy=slow")
	if err != nil {
		return l, err
	}
	defer sim.Stop()
	port, err := harness.FreePort()
	if err != nil {
		return l, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(k6, "run", "-q", "--no-usage-report", "--summary-mode=disabled", "--address", addr, "--profiling-enabled", // #nosec G204 -- the benchmark starts its own binaries with its own flags
		"-e", "LLM_BASE_URL="+sim.BaseURL, "-e", fmt.Sprint("STREAMS=", streams), "-e", fmt.Sprint("STREAMS_PER_VU=", perVU),
		"-e", "DURATION_MS=1", "-e", fmt.Sprint("MAX_TOKENS=", tokens), "-e", "GAPS=0", "-e", "LOG_CALLS=0",
		"bench/accuracy.js")
	k6Log, err := os.Create(filepath.Join(out, fmt.Sprintf("memory-%d-k6.log", streams))) // #nosec G304 -- a file in the benchmark's output directory
	if err != nil {
		return l, err
	}
	defer k6Log.Close()
	cmd.Stdout, cmd.Stderr = k6Log, k6Log
	if err := cmd.Start(); err != nil {
		return l, err
	}
	exited := make(chan struct{}) // closed when k6 has exited; waitErr is then its error
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}()

	if err := waitAllRunning(sim.BaseURL, streams, tokens, exited, func() error { return waitErr }, k6Log.Name()); err != nil {
		return l, err
	}
	time.Sleep(2 * time.Second)
	if l.heapMB, l.rssMB, l.goroutines, err = readMedians(addr, cmd.Process.Pid); err != nil {
		return l, err
	}
	// The heap profile of the last sample, for `go tool pprof -sample_index=inuse_space`.
	if err := harness.Fetch(context.Background(), "http://"+addr+"/debug/pprof/heap", filepath.Join(out, fmt.Sprintf("memory-%d-heap.pprof", streams))); err != nil {
		return l, err
	}
	if running, err := harness.SimMetric(context.Background(), sim.BaseURL, "llmsim_requests_running"); err != nil || int(running) < streams {
		return l, fmt.Errorf("streams ended during the measurement (%.0f of %d open): raise -tokens", running, streams)
	}
	return l, nil
}

// waitAllRunning waits until llm-sim runs every stream (each lasts -tokens
// seconds), for at most half of that; exited closes when k6 has ended first.
func waitAllRunning(baseURL string, streams, tokens int, exited <-chan struct{}, waitErr func() error, k6Log string) error {
	deadline := time.Now().Add(time.Duration(tokens) * time.Second / 2)
	for {
		running, err := harness.SimMetric(context.Background(), baseURL, "llmsim_requests_running")
		if err == nil && int(running) >= streams {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("k6 ended before all streams were open: %v (see %s)", waitErr(), k6Log)
		case <-time.After(250 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("only %.0f of %d streams open after %ds", running, streams, tokens/2)
		}
	}
}

// readMedians reads k6's live heap (after a forced collection), RSS and
// goroutines five times, a second apart, and keeps each one's median.
func readMedians(addr string, pid int) (heapMB, rssMB float64, goroutines int, err error) {
	var heaps, rsss []float64
	var gs []int
	for range 5 {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		rt, err := harness.ReadK6Runtime(ctx, addr, true)
		cancel()
		if err != nil {
			return 0, 0, 0, err
		}
		rss, err := harness.RSSMB(pid)
		if err != nil {
			return 0, 0, 0, err
		}
		heaps, rsss, gs = append(heaps, float64(rt.HeapAlloc)/(1<<20)), append(rsss, rss), append(gs, rt.Goroutines)
		time.Sleep(time.Second)
	}
	slices.Sort(heaps)
	slices.Sort(rsss)
	slices.Sort(gs)
	return heaps[2], rsss[2], gs[2], nil
}
