package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// writeRecord writes the record of calls calls on segment, as report() would.
func writeRecord(t *testing.T, dir, name, segment string, calls int, ttftMS float64) string {
	t.Helper()
	return writeFingerprinted(t, dir, name, segment, calls, ttftMS, nil)
}

// writeFingerprinted is writeRecord of the test fp identifies (nil: a record
// of an older version, without a fingerprint).
func writeFingerprinted(t *testing.T, dir, name, segment string, calls int, ttftMS float64, fp *runrecord.Fingerprint) string {
	t.Helper()
	start := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)
	c := report.NewCollector(report.Options{Start: start})
	for i := range calls {
		ttft := time.Duration((ttftMS + float64(i%10)) * float64(time.Millisecond))
		c.Add(&report.Observation{
			Result: &stream.Result{
				Start: start.Add(time.Duration(i) * 100 * time.Millisecond),
				End:   start.Add(time.Duration(i)*100*time.Millisecond + 2*ttft), OK: i%7 != 0,
				Err:  &stream.Error{Type: stream.ErrorType(map[bool]string{true: "", false: "timeout"}[i%7 != 0])},
				TTFT: measure.Of(ttft), E2E: measure.Of(2 * ttft), OutputTokens: 10,
			},
			Origin: record.Origin{Category: []string{"short", "long"}[i%2]},
			VUs:    4,
			Active: 2,
		})
	}
	info := &runrecord.RunInfo{Load: map[string]any{"items": map[string]any{"executor": "shared-iterations", "iterations": 120}}, Segment: segment,
		Fingerprint: fp}
	_, _, rec, err := report.Render(c.Snapshot(), nil, report.RenderOptions{Info: info})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, rec, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestMergeCommand(t *testing.T) {
	dir := t.TempDir()
	a := writeRecord(t, dir, "a.json", "0:1/2", 60, 100)
	b := writeRecord(t, dir, "b.json", "1/2:1", 40, 300)
	out, html := filepath.Join(dir, "merged.json"), filepath.Join(dir, "merged.html")
	var stdout, stderr bytes.Buffer
	// Flags before, between and after the files.
	if code := run([]string{"merge", "-o", out, a, "--html", html, b, "--text"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	data, err := os.ReadFile(out) //nolint:gosec // test file
	if err != nil {
		t.Fatal(err)
	}
	merged, err := runrecord.ParseRecord(out, data)
	if err != nil {
		t.Fatalf("the merged record must load as a record (a baseline): %v", err)
	}
	all := merged.Categories[runrecord.AllCategories]
	if all.Requests != 100 || all.Failures != 9+6 || all.Errors["timeout"] != 15 {
		t.Errorf("merged all: %d requests, %d failures, errors %v; want 100, 15, timeout:15", all.Requests, all.Failures, all.Errors)
	}
	if p50 := all.Metrics["ttft"].P50; p50 < 100 || p50 > 310 {
		t.Errorf("merged TTFT P50 %g", p50)
	}
	if !strings.Contains(stdout.String(), "merged from 2 instances (segments 0:1/2, 1/2:1)") {
		t.Errorf("text report:\n%s", stdout.String())
	}
	if doc, _ := os.ReadFile(html); !bytes.Contains(doc, []byte(`id="instances"`)) { //nolint:gosec // test file
		t.Error("no HTML report")
	}

	// Against a baseline: the slower instance's record stands for a run that was all slower.
	slow := writeRecord(t, dir, "slow.json", "", 100, 300)
	stdout.Reset()
	if code := run([]string{"merge", "--baseline", slow, a, b}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	// Both cover the whole test, made the same way: verdicts, and no "baseline differs".
	if s := stdout.String(); !strings.Contains(s, "baseline (") || !strings.Contains(s, "better  short          ttft   p50") ||
		strings.Contains(s, "baseline differs") {
		t.Errorf("comparison with a slower baseline:\n%s", s)
	}

	for name, c := range map[string]struct {
		args []string
		code int
		want string
	}{
		"overlap":   {[]string{"merge", a, a}, 1, "overlaps"},
		"missing":   {[]string{"merge", a}, 1, "1/2:1"},
		"no file":   {[]string{"merge", a, filepath.Join(dir, "nope.json")}, 1, "nope.json"},
		"bad base":  {[]string{"merge", "--baseline", html, a, b}, 1, "merged.html is not a JSON run record"},
		"not json":  {[]string{"merge", a, html}, 1, "merged.html is not a JSON run record"},
		"no args":   {[]string{"merge"}, 2, "no run records given"},
		"bad flag":  {[]string{"merge", "--htm", "x", a}, 2, "htm"},
		"nothing":   {nil, 2, "usage: llmstream merge"},
		"other cmd": {[]string{"split"}, 2, `unknown command "split"`},
	} {
		var so, se bytes.Buffer
		if code := run(c.args, &so, &se); code != c.code || !strings.Contains(se.String(), c.want) {
			t.Errorf("%s: exit %d (want %d), stderr %q does not say %q", name, code, c.code, se.String(), c.want)
		}
	}
}

// Records of two tests that look alike (same load shape, no client or data
// set to tell them apart) are refused when their fingerprints differ, with
// what differs; a record without one merges with a warning on stderr.
func TestMergeCommandChecksTheFingerprint(t *testing.T) {
	dir := t.TempDir()
	fp := func(script string) *runrecord.Fingerprint {
		return &runrecord.Fingerprint{Digest: "d-" + script, Files: map[string]string{"test.js": script}, Options: "o"}
	}
	a := writeFingerprinted(t, dir, "a.json", "0:1/2", 60, 100, fp("1111"))
	other := writeFingerprinted(t, dir, "other.json", "1/2:1", 40, 100, fp("2222"))
	var stdout, stderr bytes.Buffer
	if code := run([]string{"merge", a, other}, &stdout, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "a.json and "+other+" are not records of the same test: file test.js differs (1111 vs 2222)") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}

	same := writeFingerprinted(t, dir, "same.json", "1/2:1", 40, 100, fp("1111"))
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"merge", a, same}, &stdout, &stderr); code != 0 || stderr.Len() != 0 {
		t.Errorf("instances of one test: exit %d, stderr %q", code, stderr.String())
	}

	old := writeRecord(t, dir, "old.json", "1/2:1", 40, 100)
	stderr.Reset()
	if code := run([]string{"merge", a, old}, &stdout, &stderr); code != 0 ||
		!strings.Contains(stderr.String(), "llmstream: warning: "+old+" has no test fingerprint") {
		t.Errorf("a record of an older version: exit %d, stderr %q", code, stderr.String())
	}
}
