package module

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dcgmExposition is a DCGM exporter page of one GPU whose energy counter
// reads mj.
func dcgmExposition(mj int64) string {
	return fmt.Sprintf(`# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).
# TYPE DCGM_FI_DEV_POWER_USAGE gauge
DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-1",pci_bus_id="00000000:10:00.0",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="n1"} 350.5
# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy consumption since boot (in mJ).
# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0",UUID="GPU-1",pci_bus_id="00000000:10:00.0",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="n1"} %d
`, mj)
}

// serverMetrics as a list: the engine and a DCGM exporter, each scraped on
// its own interval and tagged with its source, and an exporter serving
// garbage that costs one warning while the others are read. The run's GPU
// energy is divided by the engine's finished requests, in the record, the
// text and one k6 sample at the end.
func TestServerMetricsSeveralSources(t *testing.T) {
	t.Parallel()
	llmSrv, _ := streamServer(t, 0, 0, []string{"a", "b"})
	var finished, mj atomic.Int64
	mj.Store(9_000_000)
	engine := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = fmt.Fprint(w, vllmExposition(finished.Load(), 0))
	}))
	t.Cleanup(engine.Close)
	dcgm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = fmt.Fprint(w, dcgmExposition(mj.Load()))
	}))
	t.Cleanup(dcgm.Close)
	var garbageHits atomic.Int64
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		garbageHits.Add(1)
		w.Header().Set("Content-Type", "text/html")
		_, _ = fmt.Fprint(w, "<html>not metrics</html>")
	}))
	t.Cleanup(garbage.Close)

	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, name: 'svc', serverMetrics: [
		{url: %q, source: 'engine', interval: '50ms'},
		{url: %q, source: 'dcgm', interval: '60ms'},
		{url: %q, source: 'dcgm-2', interval: '50ms'}]});`, llmSrv.URL, engine.URL+"/metrics", dcgm.URL+"/metrics", garbage.URL+"/metrics"))
	vu.root.server.StartAll()
	for range 4 {
		res := vu.chat(`{messages: [{role: 'user', content: 'hi'}]}`)
		require.Equal(t, true, res["ok"])
		finished.Add(1)
		mj.Add(2_500_000) // 2.5 kJ a request
	}
	require.Eventually(t, func() bool { return garbageHits.Load() >= 3 }, 5e9, 2e7, "the garbage endpoint is scraped on")
	sources := map[string]bool{}
	for _, s := range vu.drain()["llm_server_scrape_duration"] {
		sources[s.Tags.Map()["source"]] = true
	}

	out := vu.run(`llm.report(undefined, {stdout: true, json: 'run.json'})`).Export().(map[string]any) //nolint:forcetypeassert
	text, _ := out["stdout"].(string)
	assert.Contains(t, text, "GPU energy (run): 10000.0 J")
	assert.Contains(t, text, "2500 J per request")
	assert.Contains(t, text, "source dcgm")
	var rec struct {
		Server []struct {
			Source   string   `json:"source"`
			Engine   string   `json:"engine"`
			Missing  string   `json:"missing"`
			Warnings []string `json:"warnings"`
			Failed   int      `json:"failed"`
			Run      *struct {
				Energy *struct {
					Joules      *float64 `json:"joules"`
					JPerRequest *float64 `json:"j_per_request"`
				} `json:"energy"`
			} `json:"run"`
		} `json:"server"`
	}
	raw, _ := out["run.json"].(string)
	require.NoError(t, json.Unmarshal([]byte(raw), &rec))
	require.Len(t, rec.Server, 3)
	assert.Equal(t, "engine", rec.Server[0].Source)
	assert.Equal(t, "dcgm", rec.Server[1].Engine)
	require.NotNil(t, rec.Server[1].Run.Energy.Joules)
	assert.InDelta(t, 10_000, *rec.Server[1].Run.Energy.Joules, 1e-6, "the counter's delta, baseline to final snapshot")
	assert.InDelta(t, 2500, *rec.Server[1].Run.Energy.JPerRequest, 1e-6)
	assert.Contains(t, rec.Server[2].Missing, "not a Prometheus exposition")

	after := vu.drain()
	for _, s := range after["llm_server_scrape_duration"] {
		sources[s.Tags.Map()["source"]] = true
	}
	assert.True(t, sources["engine"] && sources["dcgm"], "samples tagged with their source: %v", sources)
	perReq := after["llm_server_energy_per_request"]
	require.Len(t, perReq, 1, "one sample, at the end")
	assert.InDelta(t, 2500, perReq[0].Value, 1e-6)
	assert.Equal(t, "dcgm", perReq[0].Tags.Map()["source"])
	assert.GreaterOrEqual(t, rec.Server[2].Failed, 3)
	assert.Equal(t, 1, strings.Count(strings.Join(rec.Server[2].Warnings, "\n"), "not a Prometheus exposition"), "one warning for the garbage endpoint")
}
