package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// webDashboardConfig is the web dashboard configuration with the LLM tab.
const webDashboardConfig = "dashboards/web-dashboard.json"

type webDashboard struct {
	Tabs []struct {
		ID       string `json:"id"`
		Title    string `json:"title"`
		Sections []struct {
			Panels []struct {
				Kind   string `json:"kind"`
				Title  string `json:"title"`
				Series []struct {
					Query  string `json:"query"`
					Legend string `json:"legend"`
				} `json:"series"`
			} `json:"panels"`
		} `json:"sections"`
	} `json:"tabs"`
}

// domOf loads a page in headless Chromium and returns the DOM after its
// scripts ran. It skips the test when Chromium is not installed (make setup
// installs it as root).
func domOf(t *testing.T, page string) string {
	t.Helper()
	var bin string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		t.Skip("chromium is not installed (Debian package `chromium`; make setup installs it as root): the dashboard is not rendered")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", //nolint:gosec // test
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+t.TempDir(), "--virtual-time-budget=20000", "--dump-dom", "file://"+page)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Run(), "chromium: %s", errb.String())
	return out.String()
}

var (
	chartTitle  = regexp.MustCompile(`<h4[^>]*>([^<]+)</h4>`)
	legendLabel = regexp.MustCompile(`<div class="u-label">([^<]*)</div>`)
)

// TestWebDashboardLLMTab runs examples/dashboards.js with k6's web dashboard
// configured by dashboards/web-dashboard.json, exports its HTML report, and
// renders the report in headless Chromium: the LLM tab must be there with
// every chart of it drawn with data (every series of a chart, but for the
// per-category charts, which have a line for each category the example
// draws), and failures split by error type.
func TestWebDashboardLLMTab(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), webDashboardConfig))
	require.NoError(t, err)
	var cfg webDashboard
	require.NoError(t, json.Unmarshal(raw, &cfg))
	require.NotEmpty(t, cfg.Tabs)
	require.Equal(t, "LLM", cfg.Tabs[0].Title, "the LLM tab comes first")

	script := filepath.Join("examples", "dashboards.js")
	sim := startSim(t, simArgs(t, filepath.Join(repoRoot(t), script))...)
	report := filepath.Join(t.TempDir(), "dashboard-report.html")
	code, out := runK6Env(t, script, map[string]string{"LLM_BASE_URL": sim + "/v1", "DURATION": "8s"}, []string{
		"K6_WEB_DASHBOARD=true",
		"K6_WEB_DASHBOARD_PORT=-1", // no live server: only the exported report
		"K6_WEB_DASHBOARD_PERIOD=2s",
		"K6_WEB_DASHBOARD_TAGS=group,category,error_type",
		"K6_WEB_DASHBOARD_EXPORT=" + report,
		"XK6_DASHBOARD_CONFIG=" + webDashboardConfig,
	})
	require.Equal(t, 0, code, out)

	dom := domOf(t, report)
	start := strings.Index(dom, `id="`+cfg.Tabs[0].ID+`"`)
	require.GreaterOrEqual(t, start, 0, "the report has no LLM tab")
	tab := dom[start:]
	if end := strings.Index(tab[1:], `id="tab-`); end > 0 {
		tab = tab[:end+1]
	}

	// Each chart's slice of the tab: from its title to the next title.
	charts := map[string][]string{}
	titles := chartTitle.FindAllStringSubmatchIndex(tab, -1)
	for i, m := range titles {
		end := len(tab)
		if i+1 < len(titles) {
			end = titles[i+1][0]
		}
		var labels []string
		for _, l := range legendLabel.FindAllStringSubmatch(tab[m[1]:end], -1) {
			if !strings.EqualFold(l[1], "time") { // the x axis
				labels = append(labels, l[1])
			}
		}
		if strings.Contains(tab[m[1]:end], ">no data<") {
			labels = nil
		}
		charts[tab[m[2]:m[3]]] = labels
	}
	drawn := 0
	for _, s := range cfg.Tabs[0].Sections {
		for _, p := range s.Panels {
			if p.Kind != "chart" {
				continue // the exported report draws charts; stats are for the live page
			}
			labels, ok := charts[p.Title]
			require.True(t, ok, "chart %q is not in the rendered LLM tab (no data?)", p.Title)
			require.NotEmpty(t, labels, "chart %q has no series", p.Title)
			if strings.Contains(p.Title, "by category") {
				for _, c := range []string{"short", "medium"} { // the example's categories
					require.Contains(t, strings.Join(labels, " "), c, "chart %q", p.Title)
				}
			} else {
				// Every series is drawn: a server chart must not pass on the
				// client's line beside it alone.
				require.GreaterOrEqual(t, len(labels), len(p.Series), "chart %q: %q", p.Title, labels)
				for _, s := range p.Series {
					if s.Legend != "" {
						require.Contains(t, labels, s.Legend, "chart %q: series %s drew nothing", p.Title, s.Query)
					}
				}
			}
			if strings.Contains(p.Title, "error type") {
				require.Contains(t, strings.Join(labels, " "), "error_type:", "chart %q", p.Title)
			}
			drawn++
		}
	}
	require.Positive(t, drawn)
	require.Contains(t, dom, "<canvas", "uPlot drew no canvas")
	t.Logf("LLM tab: %d charts drawn with data", drawn)
}
