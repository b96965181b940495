package report

import (
	"bytes"
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// pageLayout is what testdata/layout-probe.js measures in Chromium.
type pageLayout struct {
	Viewport  float64 `json:"viewport"`
	PageWidth float64 `json:"pageWidth"`
	Tables    []struct {
		ID      string  `json:"id"`
		Right   float64 `json:"right"`
		Scrolls bool    `json:"scrolls"`
	} `json:"tables"`
	Charts []struct {
		ID       string `json:"id"`
		Overlaps int    `json:"overlaps"`
		Lines    int    `json:"lines"`
		Dots     int    `json:"dots"`
	} `json:"charts"`
	Placeholders []struct {
		ID   string `json:"id"`
		Text string `json:"text"`
	} `json:"placeholders"`
}

var probeOut = regexp.MustCompile(`(?s)<pre id="layout-probe">(.*?)</pre>`)

// layoutAt lays the report out in headless Chromium at a window width and
// returns what the probe measured: the page's own HTML has no script, so the
// probe goes into a copy.
func layoutAt(t *testing.T, doc []byte, width string) pageLayout {
	t.Helper()
	probe, err := os.ReadFile(filepath.Join("testdata", "layout-probe.js"))
	if err != nil {
		t.Fatal(err)
	}
	page := bytes.Replace(doc, []byte("</body>"), append(append([]byte("<script>"), probe...), "</script></body>"...), 1)
	file := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(file, page, 0o600); err != nil {
		t.Fatal(err)
	}
	m := probeOut.FindSubmatch(chromium(t, "--window-size="+width+",1000", "--dump-dom", "file://"+file))
	if m == nil {
		t.Fatal("the layout probe wrote nothing")
	}
	var l pageLayout
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &l); err != nil {
		t.Fatalf("%v: %.300s", err, m[1])
	}
	return l
}

// TestReportFitsThePage: at 1400 px no table runs past the page or needs a
// scrollbar, no legend sits on a title or another key, and no chart is a
// lone dot; a one-stage run shows the step-load placeholder instead.
func TestReportFitsThePage(t *testing.T) {
	if chromiumPath() == "" {
		t.Skip("chromium is not installed (apt-get install chromium); the layout check is skipped")
	}
	_, step, _ := sampleReport(t)
	one := RenderHTML(synth{seed: 3, stages: steps(16), hitRate: 0.5}.collect(), nil, RenderOptions{})
	for name, doc := range map[string][]byte{"step load": step, "one stage": one} {
		l := layoutAt(t, doc, "1400")
		if l.PageWidth > l.Viewport || len(l.Tables) < 6 || len(l.Charts) < 8 {
			t.Errorf("%s: page %g px wide in a %g px window, %d tables, %d charts", name, l.PageWidth, l.Viewport, len(l.Tables), len(l.Charts))
		}
		for _, tb := range l.Tables {
			if tb.Right > l.Viewport || tb.Scrolls {
				t.Errorf("%s: table %q ends at %g px (window %g) or scrolls", name, tb.ID, tb.Right, l.Viewport)
			}
		}
		for _, c := range l.Charts {
			if c.Overlaps > 0 || (c.Lines == 0 && c.Dots > 0) {
				t.Errorf("%s: chart %s: %d legend overlaps, %d lines, %d dots", name, c.ID, c.Overlaps, c.Lines, c.Dots)
			}
		}
		if want := name == "one stage"; want != (len(l.Placeholders) == 1) {
			t.Errorf("%s: placeholders %v", name, l.Placeholders)
		}
	}
}
