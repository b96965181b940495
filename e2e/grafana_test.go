package e2e

import (
	"context"
	"encoding/json"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// dashboardPath is the Grafana dashboard the test proves.
const dashboardPath = "dashboards/grafana-llmstream.json"

// startPrometheus runs a real Prometheus on a free loopback port, with the
// remote-write receiver and native histograms on and its storage in a
// temporary directory. It skips the test when prometheus is not installed
// (make setup, the start of make test, installs the Debian package as root).
func startPrometheus(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("prometheus is not installed (Debian package `prometheus`; make setup installs it as root): the Grafana dashboard is not checked")
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	require.NoError(t, os.WriteFile(cfg, []byte("global:\n  scrape_interval: 15s\n"), 0o600))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())

	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, //nolint:gosec // the test's own arguments
		"--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--web.enable-remote-write-receiver",
		"--enable-feature=native-histograms", "--log.level=warn")
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	logs, err := os.Create(filepath.Join(dir, "prometheus.log")) //nolint:gosec // temp dir
	require.NoError(t, err)
	cmd.Stdout, cmd.Stderr = logs, logs
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		_ = logs.Close()
	})
	base := "http://" + addr
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(base + "/-/ready") //nolint:noctx // a loopback probe
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(logs.Name()) //nolint:gosec // temp dir
			t.Fatalf("prometheus not ready on %s within 60s:\n%s", addr, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// promQuery runs an instant query and returns the finite values it gave.
func promQuery(t *testing.T, base, query string) []float64 {
	t.Helper()
	resp, err := http.PostForm(base+"/api/v1/query", url.Values{"query": {query}}) //nolint:noctx // loopback
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Value []any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	require.Equal(t, "success", body.Status, "query %s: %s", query, body.Error)
	var vals []float64
	for _, r := range body.Data.Result {
		if len(r.Value) != 2 {
			continue
		}
		s, _ := r.Value[1].(string)
		if v, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) {
			vals = append(vals, v)
		}
	}
	return vals
}

type grafanaTarget struct {
	Expr  string `json:"expr"`
	RefID string `json:"refId"`
}

type grafanaPanel struct {
	Type    string          `json:"type"`
	Title   string          `json:"title"`
	Targets []grafanaTarget `json:"targets"`
	Panels  []grafanaPanel  `json:"panels"` // a collapsed row's
}

// allPanels lists the dashboard's panels with those of collapsed rows, which
// Grafana keeps inside the row: a panel there must have data too.
func allPanels(panels []grafanaPanel) []grafanaPanel {
	var all []grafanaPanel
	for _, p := range panels {
		all = append(all, p)
		all = append(all, allPanels(p.Panels)...)
	}
	return all
}

type grafanaDashboard struct {
	Panels     []grafanaPanel `json:"panels"`
	Templating struct {
		List []struct {
			Name       string `json:"name"`
			Type       string `json:"type"`
			Definition string `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
}

// substitute replaces the dashboard variables as Grafana would with "All"
// selected, and the test run's id.
func substitute(expr, testID string) string {
	return strings.NewReplacer(
		"$testid", testID, "$category", ".*", "$model", ".*", "$name", ".*",
		"$__rate_interval", "1m", "$__interval", "15s", "$__range", "5m",
	).Replace(expr)
}

// TestGrafanaDashboardHasData runs examples/dashboards.js twice against
// llm-sim with k6's experimental-prometheus-rw output into a real Prometheus:
// once with trend stats (k6_llm_ttft_p95...) and once with native histograms
// (k6_llm_ttft_seconds). Each quantile panel has one query per form (refId H…
// and S…); every other query serves both. Every query of every panel must
// return data in the run of its form, and every template variable values.
func TestGrafanaDashboardHasData(t *testing.T) {
	t.Parallel()
	prom := startPrometheus(t)
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), dashboardPath))
	require.NoError(t, err)
	var dash grafanaDashboard
	require.NoError(t, json.Unmarshal(raw, &dash))

	script := filepath.Join("examples", "dashboards.js")
	sim := startSim(t, simArgs(t, filepath.Join(repoRoot(t), script))...)
	modes := []struct{ id, prefix, env string }{
		{"stats", "S", "K6_PROMETHEUS_RW_TREND_STATS=p(50),p(95),p(99),avg"},
		{"hist", "H", "K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM=true"},
	}
	for _, m := range modes {
		code, out := runK6Env(t, script, map[string]string{"LLM_BASE_URL": sim + "/v1", "DURATION": "8s"},
			[]string{
				"K6_PROMETHEUS_RW_SERVER_URL=" + prom + "/api/v1/write",
				"K6_PROMETHEUS_RW_PUSH_INTERVAL=1s", m.env,
			},
			"-o", "experimental-prometheus-rw", "--tag", "testid="+m.id)
		require.Equal(t, 0, code, out)
	}

	queries := 0
	for _, m := range modes {
		for _, v := range dash.Templating.List {
			if v.Type != "query" {
				continue
			}
			inner := strings.TrimSuffix(strings.TrimPrefix(v.Definition, "label_values("), ")")
			i := strings.LastIndex(inner, ",")
			require.Positive(t, i, "variable %s: %s", v.Name, v.Definition)
			match, label := substitute(strings.TrimSpace(inner[:i]), m.id), strings.TrimSpace(inner[i+1:])
			if label == "testid" {
				match += `{testid="` + m.id + `"}`
			}
			resp, err := http.Get(prom + "/api/v1/label/" + label + "/values?match[]=" + url.QueryEscape(match)) //nolint:noctx // loopback
			require.NoError(t, err)
			var lv struct{ Data []string }
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&lv))
			_ = resp.Body.Close()
			require.NotEmpty(t, lv.Data, "%s run: variable %s (%s) has no values", m.id, v.Name, v.Definition)
		}
		for _, p := range allPanels(dash.Panels) {
			if p.Type == "row" {
				continue
			}
			require.NotEmpty(t, p.Targets, "panel %q has no query", p.Title)
			for _, tg := range p.Targets {
				other := map[string]string{"S": "H", "H": "S"}[m.prefix]
				if strings.HasPrefix(tg.RefID, other) {
					continue // the other form's query
				}
				q := substitute(tg.Expr, m.id)
				require.NotContains(t, q, "$", "panel %q: unsubstituted variable in %s", p.Title, q)
				vals := promQuery(t, prom, q)
				require.NotEmpty(t, vals, "%s run: panel %q query %s returned no data:\n%s", m.id, p.Title, tg.RefID, q)
				queries++
			}
		}
	}
	t.Logf("%d panel queries returned data", queries)
	require.Positive(t, queries)
}
