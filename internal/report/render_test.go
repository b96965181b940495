package report

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// chartIDs are the charts a report must contain (the README and the browser test rely on them).
var chartIDs = []string{"ttft-hist", "gap-hist", "ttft-cache", "ts-ttft", "ts-tps", "ts-throughput", "ts-active",
	"ts-failures", "stage-ttft", "stage-tps", "stage-throughput", "pareto"}

// sampleReport renders a run with a step load, a cache mix, queueing and a baseline.
// Every call renders the same seeded runs, so they are rendered once (under
// -race a render of this run is among the package's costliest steps) and
// each caller gets its own copy of the bytes.
func sampleReport(t *testing.T) (string, []byte, []byte) {
	t.Helper()
	sample.once.Do(func() {
		base, err := synth{seed: 1, stages: steps(8, 16, 24, 32), hitRate: 0.5}.record()
		if err != nil {
			sample.err = err
			return
		}
		run := synth{seed: 2, stages: steps(8, 16, 24, 32), hitRate: 0.5,
			queueMS: func(c int) float64 { return 30 * float64(max(0, c-16)) }}.collect()
		sample.text, sample.doc, sample.rec, sample.err = Render(run, nil, RenderOptions{Baseline: base,
			Meta: map[string]any{"k6": "v1.8.1", "module": "dev", "seed": 7, "dataset": "synthetic:7"}})
	})
	if sample.err != nil {
		t.Fatal(sample.err)
	}
	return sample.text, bytes.Clone(sample.doc), bytes.Clone(sample.rec)
}

// sample is sampleReport's one rendering.
var sample struct {
	once     sync.Once
	text     string
	doc, rec []byte
	err      error
}

func TestRenderTextHasEveryCategoryAndFinding(t *testing.T) {
	text, _, _ := sampleReport(t)
	for _, want := range []string{"short", "medium", "long_context", "all", "ttft", "e2e", "gap", "tpot",
		"stage (VUs)", "[queue_bound]", "baseline ("} {
		if !strings.Contains(text, want) {
			t.Errorf("text summary lacks %q:\n%s", want, text)
		}
	}
	if s := RenderText(NewCollector(Options{}).Snapshot(), nil, nil); !strings.Contains(s, "no LLM calls") {
		t.Errorf("empty run: %q", s)
	}
}

func TestRenderHTMLIsSelfContained(t *testing.T) {
	_, doc, _ := sampleReport(t)
	for _, id := range chartIDs {
		if !bytes.Contains(doc, []byte(`<svg class="chart" id="`+id+`"`)) {
			t.Errorf("chart %s missing", id)
		}
	}
	for _, banned := range []string{"<script", "http://", "https://", "<link", "@import", "src="} {
		clean := bytes.ReplaceAll(doc, []byte(`xmlns="http://www.w3.org/2000/svg"`), nil)
		if bytes.Contains(clean, []byte(banned)) {
			t.Errorf("HTML is not self-contained: contains %q", banned)
		}
	}
	if !bytes.Contains(doc, []byte(`data-id="queue_bound"`)) || !bytes.Contains(doc, []byte(`id="comparison"`)) {
		t.Error("diagnosis or comparison missing from HTML")
	}
	if bytes.Contains(doc, []byte("NaN")) {
		t.Error("HTML shows NaN")
	}
}

func TestRenderRecordIsAValidBaseline(t *testing.T) {
	_, _, rec := sampleReport(t)
	var raw map[string]any
	if err := json.Unmarshal(rec, &raw); err != nil {
		t.Fatal(err)
	}
	if raw["format"] != float64(runrecord.RecordFormat) {
		t.Fatalf("format = %v", raw["format"])
	}
	back, err := runrecord.LoadBaseline(rec)
	if err != nil {
		t.Fatal(err)
	}
	if back.Meta["dataset"] != "synthetic:7" || len(back.Findings) == 0 || back.Comparison == nil {
		t.Fatalf("record lost metadata, findings or comparison: %+v", back.Meta)
	}
	if n := len(back.Categories["short"].Samples["ttft"]); n == 0 || n > 2000 {
		t.Fatalf("short TTFT reservoir holds %d values", n)
	}
}

func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

func chromium(t *testing.T, args ...string) []byte {
	t.Helper()
	bin := chromiumPath()
	if bin == "" {
		t.Skip("chromium is not installed (apt-get install chromium); the browser check is skipped")
	}
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir()}
	cmd := exec.Command(bin, append(base, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("chromium: %v\n%s", err, errb.String())
		}
	case <-time.After(90 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("chromium did not finish in 90 s")
	}
	return out.Bytes()
}

// TestHTMLReportInBrowser loads the report in headless Chromium and checks
// that the browser's DOM has every chart with drawn series.
func TestHTMLReportInBrowser(t *testing.T) {
	if chromiumPath() == "" {
		t.Skip("chromium is not installed (apt-get install chromium); the browser check is skipped")
	}
	_, doc, _ := sampleReport(t)
	file := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(file, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	dom := chromium(t, "--dump-dom", "file://"+file)
	for _, id := range chartIDs {
		re := regexp.MustCompile(`<svg[^>]*id="` + id + `"[^>]*>(.*?)</svg>`)
		m := re.FindSubmatch(dom)
		if m == nil {
			t.Errorf("chart %s not in the browser DOM", id)
			continue
		}
		if !bytes.Contains(m[1], []byte("<polyline")) && !bytes.Contains(m[1], []byte("<circle")) {
			t.Errorf("chart %s has no series drawn", id)
		}
	}
}

// TestReportScreenshot saves docs/report.png for the README when
// LLMSTREAM_REPORT_SCREENSHOT is set (e.g. =1).
func TestReportScreenshot(t *testing.T) {
	if os.Getenv("LLMSTREAM_REPORT_SCREENSHOT") == "" {
		t.Skip("set LLMSTREAM_REPORT_SCREENSHOT=1 to write docs/report.png")
	}
	_, doc, _ := sampleReport(t)
	file := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(file, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	dst, err := filepath.Abs(filepath.Join("..", "..", "docs", "report.png"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	chromium(t, "--screenshot="+dst, "--window-size=1200,2600", "--hide-scrollbars", "file://"+file)
	if st, err := os.Stat(dst); err != nil || st.Size() == 0 {
		t.Fatalf("no screenshot written: %v", err)
	}
}
