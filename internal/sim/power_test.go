package sim

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The energy counter is the power model's exact integral: idle power over
// the whole time, plus each request's share while it held a running slot.
func TestPowerModelIntegratesTheBatch(t *testing.T) {
	p := testProfile()
	p.PowerIdleW, p.PowerPerRequestW, p.GPUs = 70, 150, 2
	h := newHarness(t, p)
	a, b := h.at(0, spec(20, 8)), h.at(35, spec(10, 5))
	h.run()
	ta, tb := h.eng.timeline(a.seq), h.eng.timeline(b.seq)
	end := tb.Done
	if ta.Done.After(end) {
		end = ta.Done
	}
	h.eng.mu.Lock()
	j, w := h.eng.power.read(end)
	h.eng.mu.Unlock()
	busy := ta.Done.Sub(ta.Admitted).Seconds() + tb.Done.Sub(tb.Admitted).Seconds()
	want := 2*70*end.Sub(t0).Seconds() + 150*busy
	assert.InDelta(t, want, j, 1e-9)
	assert.InDelta(t, 140, w, 1e-12, "nothing runs at the end: idle draw")
}

// /dcgm/metrics is shaped as NVIDIA's exporter writes it, one series per
// GPU; without a power model there is no such endpoint.
func TestDCGMEndpoint(t *testing.T) {
	m := fastModel("m")
	m.PowerIdleW, m.PowerPerRequestW, m.GPUs = 100, 50, 2
	s := newTestSim(t, m)
	resp, body := s.get("/dcgm/metrics")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	text := string(body)
	assert.Contains(t, text, "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n")
	assert.Contains(t, text, `DCGM_FI_DEV_POWER_USAGE{gpu="1",UUID="GPU-00000000-0000-4000-8000-000000000001",pci_bus_id="00000000:11:00.0",device="nvidia1",modelName="llm-sim GPU (m)",Hostname="llm-sim"} 100.000000`)
	assert.Equal(t, 2, strings.Count(text, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{"))

	gaugeOnly := fastModel("g")
	gaugeOnly.PowerIdleW, gaugeOnly.PowerGaugeOnly = 80, true
	_, body = newTestSim(t, gaugeOnly).get("/dcgm/metrics")
	assert.NotContains(t, string(body), "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{")
	assert.Contains(t, string(body), "DCGM_FI_DEV_POWER_USAGE{")

	resp, _ = newTestSim(t).get("/dcgm/metrics")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}
