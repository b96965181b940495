package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// layoutChart is one chart as the browser drew it.
type layoutChart struct {
	ID       string    `json:"id"`
	Overlaps int       `json:"overlaps"`
	Lines    int       `json:"lines"`
	Dots     int       `json:"dots"`
	Ticks    []float64 `json:"ticks"`
}

// reportLayout is what internal/report/testdata/layout-probe.js measures.
type reportLayout struct {
	Viewport  float64 `json:"viewport"`
	PageWidth float64 `json:"pageWidth"`
	Tables    []struct {
		ID      string  `json:"id"`
		Right   float64 `json:"right"`
		Scrolls bool    `json:"scrolls"`
	} `json:"tables"`
	Charts       []layoutChart `json:"charts"`
	Placeholders []struct {
		ID   string `json:"id"`
		Text string `json:"text"`
	} `json:"placeholders"`
}

var layoutProbeOut = regexp.MustCompile(`(?s)<pre id="layout-probe">(.*?)</pre>`)

// checkReportLayout lays out every HTML report an example wrote in headless
// Chromium at 1400 px (a laptop screen) and asserts what a reader sees: no
// table wider than the page or scrolling, no legend on a title, no chart that
// is a lone dot; a one-stage run says it needs a step load, a step load draws
// its stages.
func checkReportLayout(t *testing.T, script, dir string) {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(dir, "*.html"))
	require.NoError(t, err)
	if len(pages) == 0 {
		return
	}
	var bin string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		t.Log("chromium is not installed (Debian package `chromium`; .ci/run installs it): the report's layout is not checked")
		return
	}
	probe, err := os.ReadFile(filepath.Join(repoRoot(t), "internal", "report", "testdata", "layout-probe.js"))
	require.NoError(t, err)
	for _, page := range pages {
		doc, err := os.ReadFile(page) //nolint:gosec // a file the test's k6 run wrote
		require.NoError(t, err)
		probed := filepath.Join(t.TempDir(), "probed.html")
		doc = bytes.Replace(doc, []byte("</body>"), []byte("<script>"+string(probe)+"</script></body>"), 1)
		require.NoError(t, os.WriteFile(probed, doc, 0o600))
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", //nolint:gosec // test
			"--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--user-data-dir="+t.TempDir(), "--window-size=1400,1000", "--dump-dom", "file://"+probed)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		require.NoError(t, cmd.Run(), "chromium: %s", errb.String())
		cancel()
		m := layoutProbeOut.FindSubmatch(out.Bytes())
		require.NotNil(t, m, "%s: the layout probe wrote nothing", page)
		var l reportLayout
		require.NoError(t, json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &l))
		name := filepath.Base(page)
		require.LessOrEqual(t, l.PageWidth, l.Viewport, "%s: the page scrolls sideways", name)
		require.NotEmpty(t, l.Charts, name)
		for _, tb := range l.Tables {
			require.False(t, tb.Right > l.Viewport || tb.Scrolls, "%s: table %q ends at %v px in a %v px window (or scrolls)", name, tb.ID, tb.Right, l.Viewport)
		}
		for _, c := range l.Charts {
			require.Zero(t, c.Overlaps, "%s: chart %s has a legend over its title or another key", name, c.ID)
			require.False(t, c.Lines == 0 && c.Dots > 0, "%s: chart %s is %d lone dot(s)", name, c.ID, c.Dots)
		}
		switch filepath.Base(script) {
		case "report.js": // one level of VUs
			require.Len(t, l.Placeholders, 1, name)
			require.Contains(t, l.Placeholders[0].Text, "Needs a step load", name)
		case "step-load.js":
			require.Empty(t, l.Placeholders, name)
			drawn := 0
			for _, c := range l.Charts {
				if c.ID == "stage-ttft" && c.Lines == 2 && c.Dots >= 2*4 {
					drawn++
				}
			}
			require.Equal(t, 1, drawn, "%s: stage-ttft should draw p50 and p95 over the steps: %+v", name, l.Charts)
			pareto := slices.IndexFunc(l.Charts, func(c layoutChart) bool { return c.ID == "pareto" })
			require.GreaterOrEqual(t, pareto, 0, "%s: a step load's page has the Pareto chart: %+v", name, l.Charts)
			require.True(t, l.Charts[pareto].Lines >= 1 && l.Charts[pareto].Dots >= 4,
				"%s: the Pareto chart should draw the stages and the front: %+v", name, l.Charts[pareto])
		}
	}
}
