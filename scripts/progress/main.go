// Command progress runs one step of `make test` and keeps its output readable
// while it runs: a step that prints nothing for a while gets a line saying what it
// is waiting for, so no stage is minutes of silence; with -json it runs
// `go test -json` and prints a line per package, per test or per subtest as each
// finishes (the full output only of what failed), then the counts.
//
//	progress -stage lint -hint 'compiling golangci-lint' -- golangci-lint run ./...
//	progress -stage e2e -json -each subtest -counts FILE -- go test -json ./e2e/...
//
// -counts appends "passed N failed N skipped N" to FILE for scripts/test.sh's summary,
// then "failing" and the failed tests' names: a long run's log is often read only
// from its end, so the summary names what to run again.
// A separate program rather than a shell filter because go test's JSON events
// (which test runs, which package is still compiling) are what says where a run is.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"
)

// event is one line of `go test -json` (cmd/test2json), build events included.
type event struct {
	Time       time.Time
	Action     string
	Package    string
	ImportPath string // build-output and build-fail events name the package here
	Test       string
	Elapsed    float64
	Output     string
}

type options struct {
	stage  string
	json   bool
	each   string // package, test or subtest: what gets a line as it finishes
	counts string
	quiet  time.Duration
	hint   string
	logs   bool
}

func main() {
	var o options
	flag.StringVar(&o.stage, "stage", "step", "the step's name in progress lines")
	flag.BoolVar(&o.json, "json", false, "the command is go test -json: summarise its events")
	flag.StringVar(&o.each, "each", "package", "with -json: a line per finished package, test or subtest")
	flag.StringVar(&o.counts, "counts", "", "append the pass/fail counts to this file")
	flag.BoolVar(&o.logs, "logs", false, "with -json: print a passing test's own log lines too (a measurement's figures)")
	flag.DurationVar(&o.quiet, "quiet", 30*time.Second, "after this long without output, say what the step waits for")
	flag.StringVar(&o.hint, "hint", "", "what a silent step is doing (shown in its progress lines)")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "progress: no command given (progress [flags] -- command args...)")
		os.Exit(2)
	}
	os.Exit(run(o, flag.Args()))
}

func run(o options, argv []string) int {
	fmt.Printf("%s: %s\n", o.stage, shown(argv))
	cmd := exec.Command(argv[0], argv[1:]...) // #nosec G204 -- runs the command the Makefile gives it
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr, cmd.Stdin = pw, pw, os.Stdin
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", o.stage, err)
		return 1
	}
	p := newPrinter(o)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			p.line(sc.Text())
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	stop := p.heartbeat()
	err := cmd.Wait()
	_ = pw.Close()
	<-done
	stop()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", o.stage, err)
		code = 1
	}
	return p.finish(code)
}

// shown is the command as the step's first line shows it: a long package list cut short.
func shown(argv []string) string {
	s := strings.Join(argv, " ")
	if r := []rune(s); len(r) > 160 {
		return string(r[:157]) + " …"
	}
	return s
}

// printer turns the command's lines into what the terminal shows; its state is
// shared with the heartbeat, hence the lock.
type printer struct {
	o        options
	mu       sync.Mutex
	start    time.Time
	last     time.Time            // when a line was last printed
	lastLine string               // the command's last line (plain mode): where it is
	running  map[string]time.Time // package or package\x00test → when it started
	output   map[string][]string  // the output of each test (and package) until it ends
	pkgsDone int
	passed   int
	failed   int
	failing  []string // the failed tests (or packages that failed outside a test), in order
	skipped  int
	buildErr bool
}

func newPrinter(o options) *printer {
	now := time.Now()
	return &printer{o: o, start: now, last: now, running: map[string]time.Time{}, output: map[string][]string{}}
}

func (p *printer) println(s string) {
	fmt.Println(s)
	p.last = time.Now()
}

func (p *printer) line(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.o.json {
		p.println(s)
		if strings.TrimSpace(s) != "" {
			p.lastLine = s
		}
		return
	}
	var e event
	if !strings.HasPrefix(s, "{") || json.Unmarshal([]byte(s), &e) != nil {
		p.println(s) // go's own messages (go: downloading …, a vet error) pass through
		return
	}
	p.event(e)
}

func key(pkg, test string) string { return pkg + "\x00" + test }

func (p *printer) event(e event) {
	switch e.Action {
	case "build-output":
		p.println(strings.TrimRight(e.Output, "\n"))
		return
	case "build-fail":
		p.buildErr = true
		p.failed++
		p.failing = append(p.failing, e.ImportPath+" (build)")
		p.println(fmt.Sprintf("FAIL %s: does not build", e.ImportPath))
		return
	case "start":
		p.running[key(e.Package, "")] = e.Time
		return
	case "run":
		p.running[key(e.Package, e.Test)] = e.Time
		return
	case "output":
		k := key(e.Package, e.Test)
		p.output[k] = append(p.output[k], e.Output)
		return
	case "pass", "fail", "skip":
	default:
		return // pause, cont, bench
	}
	k := key(e.Package, e.Test)
	out := p.output[k]
	delete(p.output, k)
	delete(p.running, k)
	elapsed := fmt.Sprintf("%.1fs", e.Elapsed)
	if e.Test == "" {
		p.endPackage(e, out, elapsed)
		return
	}
	depth := strings.Count(e.Test, "/")
	if depth == 0 {
		switch e.Action {
		case "pass":
			p.passed++
		case "fail":
			p.failed++
		case "skip":
			p.skipped++
		}
	}
	show := (depth == 0 && p.o.each != "package") || (depth == 1 && p.o.each == "subtest")
	if e.Action == "fail" {
		p.noteFailing(e.Test)
	}
	switch {
	case e.Action == "fail":
		p.println(fmt.Sprintf("%s--- FAIL %s (%s) in %s", indent(depth), e.Test, elapsed, e.Package))
		for _, l := range out {
			if !strings.HasPrefix(l, "=== ") && !strings.HasPrefix(strings.TrimSpace(l), "--- FAIL: ") {
				fmt.Print("    " + l)
			}
		}
		p.last = time.Now()
	case e.Action == "skip" && depth == 0:
		p.println(fmt.Sprintf("--- SKIP %s: %s", e.Test, skipReason(out)))
	case show:
		p.println(fmt.Sprintf("%s--- %s %s (%s)", indent(depth), strings.ToUpper(e.Action), e.Test, elapsed))
		if p.o.logs && e.Action == "pass" {
			p.printLogs(out)
		}
	}
}

// printLogs prints a passing test's own lines (its t.Log: a measurement's
// figures), without go test's framing.
func (p *printer) printLogs(out []string) {
	for _, l := range out {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- PASS: ") {
			continue
		}
		fmt.Print("    " + l)
	}
}

// noteFailing keeps the most precise name of what failed: a subtest's parent ends
// after it, and its name then adds nothing.
func (p *printer) noteFailing(test string) {
	for _, f := range p.failing {
		if strings.HasPrefix(f, test+"/") {
			return
		}
	}
	p.failing = append(p.failing, test)
}

func (p *printer) endPackage(e event, out []string, elapsed string) {
	p.pkgsDone++
	// A package's own output: "ok …" and "PASS" lines say nothing the line below does not;
	// anything else (a panic, a TestMain failure, a race report) is kept on a failure.
	switch e.Action {
	case "pass":
		if p.o.each == "package" {
			p.println(fmt.Sprintf("ok   %s (%s)", e.Package, elapsed))
		}
	case "fail":
		for _, l := range out {
			if t := strings.TrimSpace(l); t != "FAIL" && !strings.HasPrefix(t, "FAIL\t") {
				fmt.Print("    " + l)
			}
		}
		p.println(fmt.Sprintf("FAIL %s (%s)", e.Package, elapsed))
		if !p.buildErr && p.failed == 0 {
			p.failed++ // failed outside any test (TestMain, a panic at init)
			p.failing = append(p.failing, e.Package)
		}
	}
}

func indent(depth int) string { return strings.Repeat("    ", depth) }

// skipReason is the message a test gave t.Skip, without the file:line prefix.
func skipReason(out []string) string {
	for _, l := range out {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		if _, rest, ok := strings.Cut(t, ": "); ok && strings.Contains(t, ".go:") {
			return rest
		}
		return t
	}
	return "skipped"
}

// heartbeat prints, after each quiet period without output, how long the step has
// run and what it waits for; the returned func stops it.
func (p *printer) heartbeat() func() {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case now := <-t.C:
				p.mu.Lock()
				if now.Sub(p.last) >= p.o.quiet {
					p.println(p.waiting(now))
				}
				p.mu.Unlock()
			}
		}
	}()
	return func() { close(stop); wg.Wait() }
}

func (p *printer) waiting(now time.Time) string {
	s := fmt.Sprintf("  … %s: running for %s", p.o.stage, now.Sub(p.start).Round(time.Second))
	if !p.o.json {
		if p.lastLine != "" {
			l := []rune(strings.TrimSpace(p.lastLine))
			if len(l) > 100 {
				l = append(l[:99], '…')
			}
			s += fmt.Sprintf(", still at %q", string(l))
		}
		if p.o.hint != "" {
			s += "; " + p.o.hint
		}
		return s
	}
	if p.o.hint != "" {
		s += "; " + p.o.hint
	}
	var tests []string
	pkgRunning := false
	for k, t0 := range p.running {
		pkg, test, _ := strings.Cut(k, "\x00")
		if test == "" {
			pkgRunning = true
			continue
		}
		if strings.Contains(test, "/") || !p.hasRunningSubtest(pkg, test) {
			tests = append(tests, fmt.Sprintf("%s (%s)", test, now.Sub(t0).Round(time.Second)))
		}
	}
	sort.Strings(tests)
	switch {
	case len(tests) > 0:
		if len(tests) > 4 {
			tests = append(tests[:4], fmt.Sprintf("and %d more", len(tests)-4))
		}
		s += "; waiting for " + strings.Join(tests, ", ")
	case pkgRunning:
		s += "; tests starting"
	case p.pkgsDone > 0:
		s += fmt.Sprintf("; %d packages done, the others compiling or running", p.pkgsDone)
	default:
		s += "; compiling the tests (no package has finished yet)"
	}
	return s
}

func (p *printer) hasRunningSubtest(pkg, test string) bool {
	prefix := key(pkg, test+"/")
	for k := range p.running {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// finish prints the step's counts, appends them to -counts, and gives the exit code.
func (p *printer) finish(code int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	passed, failed, skipped := p.passed, p.failed, p.skipped
	if !p.o.json {
		passed, failed = 1, 0
		if code != 0 {
			passed, failed = 0, 1
		}
	} else {
		if code != 0 && failed == 0 {
			failed = 1 // go test failed before any test (a flag, a missing package)
		}
		fmt.Printf("%s: %d passed, %d failed, %d skipped in %s\n", p.o.stage, passed, failed, skipped, time.Since(p.start).Round(time.Second))
		if len(p.failing) > 0 {
			fmt.Printf("%s failed: %s\n", p.o.stage, strings.Join(p.failing, " "))
		}
	}
	if p.o.counts != "" {
		f, err := os.OpenFile(p.o.counts, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			line := fmt.Sprintf("passed %d failed %d skipped %d", passed, failed, skipped)
			if len(p.failing) > 0 {
				line += " failing " + strings.Join(p.failing, " ")
			}
			_, _ = fmt.Fprintln(f, line)
			_ = f.Close()
		}
	}
	if code == 0 && failed > 0 {
		code = 1
	}
	return code
}
