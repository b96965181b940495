// Package harness holds what the benchmark programs share: starting llm-sim on
// a free loopback port, reading a process's CPU time and memory from /proc, and
// asking k6's REST API for goroutine counts and Go heap figures.
package harness

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"github.com/google/pprof/profile"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Sim is a running llm-sim.
type Sim struct {
	Cmd     *exec.Cmd
	BaseURL string // http://127.0.0.1:PORT/v1
}

var listening = regexp.MustCompile(`listening on (https?://\S+)`)

// StartSim starts llm-sim with args (plus a free loopback address) and waits
// for the line that says where it listens. Its output goes to log.
func StartSim(bin string, log io.Writer, args ...string) (*Sim, error) {
	// #nosec G204 -- the benchmark starts its own binaries with its own flags
	cmd := exec.Command(bin, append([]string{"--addr", "127.0.0.1:0"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sent := false
		for sc.Scan() {
			fmt.Fprintln(log, sc.Text())
			if m := listening.FindStringSubmatch(sc.Text()); m != nil && !sent {
				found <- m[1]
				sent = true
			}
		}
		if !sent {
			close(found)
		}
	}()
	select {
	case url, ok := <-found:
		if !ok {
			_ = cmd.Wait()
			return nil, fmt.Errorf("%s exited before listening", bin)
		}
		return &Sim{Cmd: cmd, BaseURL: url + "/v1"}, nil
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("%s did not say where it listens within 10s", bin)
	}
}

// Stop ends the simulator.
func (s *Sim) Stop() {
	_ = s.Cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = s.Cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = s.Cmd.Process.Kill()
		<-done
	}
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's CPU times: 100 on every
// Linux architecture Go supports (it is fixed by the kernel ABI, not by HZ).
const clockTicks = 100

// CPUSeconds is the user + system CPU time process pid has used so far.
func CPUSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may contain spaces; fields after it are fixed.
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	utime, err1 := strconv.ParseFloat(fields[11], 64) // field 14
	stime, err2 := strconv.ParseFloat(fields[12], 64) // field 15
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("unreadable /proc/%d/stat", pid)
	}
	return (utime + stime) / clockTicks, nil
}

// RSSMB is the resident set size of process pid, in MiB (VmRSS).
func RSSMB(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			if err != nil {
				return 0, err
			}
			return kb / 1024, nil
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// FreePort returns a loopback port that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// K6Runtime is what k6's pprof endpoints say about its Go runtime.
type K6Runtime struct {
	Goroutines int
	HeapAlloc  uint64 // bytes of live and not yet collected heap objects
	HeapInuse  uint64
	// LiveHeap is the heap in use right after a forced collection (the heap
	// profile's inuse_space, which describes the last completed GC): unlike
	// HeapAlloc, read a moment later, it has no garbage made in between,
	// which at 100k tokens/s is tens of MB; but it is an estimate from
	// samples (one per 512 KiB allocated), a few MB off on a small heap.
	// HeapAlloc is the better figure when little garbage is made (a
	// benchmark of streams held open). Set only when collecting.
	LiveHeap uint64
}

// ReadK6Runtime asks a k6 started with --profiling-enabled --address addr.
// With collect, k6 runs a garbage collection first, so HeapAlloc is the live
// heap: comparable from sample to sample, which a soak needs.
func ReadK6Runtime(ctx context.Context, addr string, collect bool) (K6Runtime, error) {
	var r K6Runtime
	g, err := get(ctx, "http://"+addr+"/debug/pprof/goroutine?debug=1")
	if err != nil {
		return r, err
	}
	first, _, _ := strings.Cut(g, "\n")
	if _, err := fmt.Sscanf(first, "goroutine profile: total %d", &r.Goroutines); err != nil {
		return r, fmt.Errorf("goroutine profile: %q: %w", first, err)
	}
	if collect {
		if r.LiveHeap, err = liveHeap(ctx, "http://"+addr+"/debug/pprof/heap?gc=1"); err != nil {
			return r, err
		}
	}
	heapURL := "http://" + addr + "/debug/pprof/heap?debug=1"
	if collect {
		heapURL += "&gc=1" // HeapAlloc just after a collection: exact, with what garbage came since
	}
	h, err := get(ctx, heapURL)
	if err != nil {
		return r, err
	}
	for _, line := range strings.Split(h, "\n") {
		if v, ok := strings.CutPrefix(line, "# HeapAlloc = "); ok {
			r.HeapAlloc, _ = strconv.ParseUint(v, 10, 64)
		}
		if v, ok := strings.CutPrefix(line, "# HeapInuse = "); ok {
			r.HeapInuse, _ = strconv.ParseUint(v, 10, 64)
		}
	}
	return r, nil
}

// loopbackClient is for llm-sim's and k6's own endpoints on loopback, which
// llm-sim --tls serves with a self-signed certificate.
//
//nolint:gochecknoglobals // one client for the harness's GETs
var loopbackClient = &http.Client{Transport: &http.Transport{
	TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // #nosec G402 -- loopback servers of the benchmark's own
}}

func get(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := loopbackClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(b), nil
}

// SimMetric sums the samples of one metric (every label set) in llm-sim's
// /metrics; baseURL is Sim.BaseURL.
func SimMetric(ctx context.Context, baseURL, name string) (float64, error) {
	body, err := get(ctx, strings.TrimSuffix(baseURL, "/v1")+"/metrics")
	if err != nil {
		return 0, err
	}
	found, sum := false, 0.0
	for _, line := range strings.Split(body, "\n") {
		rest, ok := strings.CutPrefix(line, name)
		if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '{') {
			continue
		}
		f := strings.Fields(rest)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %q", name, line)
		}
		found, sum = true, sum+v
	}
	if !found {
		return 0, fmt.Errorf("no %s in llm-sim's /metrics", name)
	}
	return sum, nil
}

// Fetch saves the body of a GET (a pprof profile or trace from k6's REST API)
// to path.
func Fetch(ctx context.Context, url, path string) error {
	body, err := get(ctx, url)
	if err != nil {
		return err
	}
	return os.WriteFile(path, []byte(body), 0o600)
}

// liveHeap sums the inuse_space of a heap profile (the proto format, whose
// sampled values the runtime has already scaled to estimates of the whole).
func liveHeap(ctx context.Context, url string) (uint64, error) {
	p, idx, err := heapProfile(ctx, url)
	if err != nil {
		return 0, err
	}
	var sum int64
	for _, s := range p.Sample {
		sum += s.Value[idx]
	}
	return uint64(max(sum, 0)), nil
}

// K6HeapProfile is the heap profile of a k6 started with --profiling-enabled
// --address addr, right after a forced collection, and the index of
// inuse_space among its sample values: what a soak splits by stack.
func K6HeapProfile(ctx context.Context, addr string) (*profile.Profile, int, error) {
	return heapProfile(ctx, "http://"+addr+"/debug/pprof/heap?gc=1")
}

func heapProfile(ctx context.Context, url string) (*profile.Profile, int, error) {
	body, err := get(ctx, url)
	if err != nil {
		return nil, 0, err
	}
	p, err := profile.Parse(strings.NewReader(body))
	if err != nil {
		return nil, 0, fmt.Errorf("heap profile: %w", err)
	}
	for i, st := range p.SampleType {
		if st.Type == "inuse_space" {
			return p, i, nil
		}
	}
	return nil, 0, fmt.Errorf("heap profile without inuse_space")
}
