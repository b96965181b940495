package sim

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// A simple power model of a model's GPUs, so that a consumer of NVIDIA's
// DCGM exporter has ground truth: each GPU draws the idle power, and every
// running request adds its share of power_per_request_w. The energy counter
// integrates that draw exactly (it is piecewise constant between changes of
// the running batch), as the exporter's counter is the hardware's own
// integral; the power gauge is the draw at the scrape.

// energyBaseMJ is where the simulated counters start, as a real counter
// holds the energy since the driver loaded.
const energyBaseMJ = 5e9

// powerMeter integrates an engine's draw; the engine's lock guards it.
type powerMeter struct {
	idleW, perRequestW float64
	gpus               int
	last               time.Time
	running            int
	joules             float64 // all GPUs, since the engine started
}

func newPowerMeter(p ModelProfile, now time.Time) *powerMeter {
	if p.PowerIdleW == 0 && p.PowerPerRequestW == 0 {
		return nil
	}
	return &powerMeter{idleW: p.PowerIdleW, perRequestW: p.PowerPerRequestW, gpus: max(p.GPUs, 1), last: now}
}

// watts is the draw of all the GPUs with running requests in the batch.
func (m *powerMeter) watts(running int) float64 {
	return float64(m.gpus)*m.idleW + m.perRequestW*float64(running)
}

// advance integrates the draw up to now, then takes the new batch size.
func (m *powerMeter) advance(now time.Time, running int) {
	if m == nil {
		return
	}
	if now.After(m.last) {
		m.joules += m.watts(m.running) * now.Sub(m.last).Seconds()
		m.last = now
	}
	m.running = running
}

// read is the energy so far and the draw now, both for all the GPUs.
func (m *powerMeter) read(now time.Time) (joules, watts float64) {
	j := m.joules
	if now.After(m.last) {
		j += m.watts(m.running) * now.Sub(m.last).Seconds()
	}
	return j, m.watts(m.running)
}

// notePower tells the meter the batch may have changed (e.mu held).
func (e *engine) notePower(now time.Time) { e.power.advance(now, len(e.running)) }

// gpuReading is one engine's power figures at a scrape.
type gpuReading struct {
	model       string
	gpus        int
	joules, w   float64
	gaugeOnly   bool
	modelNumber int
}

// servesDCGM says whether some model has a power model.
func (s *Server) servesDCGM() bool {
	for _, m := range s.order {
		if m.eng.power != nil {
			return true
		}
	}
	return false
}

// serveDCGM writes the DCGM exporter's exposition for the models' GPUs: its
// HELP and TYPE lines (also for a field no GPU reports), its label order
// (gpu, UUID, pci_bus_id, device, modelName, Hostname), the energy counter
// typed counter and named without "_total", values in mJ and W.
func (s *Server) serveDCGM(w http.ResponseWriter) {
	var readings []gpuReading
	for i, m := range s.order {
		e := m.eng
		e.mu.Lock()
		if e.power != nil {
			j, watts := e.power.read(e.clock.Now())
			readings = append(readings, gpuReading{model: m.name, gpus: e.power.gpus, joules: j, w: watts, gaugeOnly: e.p.PowerGaugeOnly, modelNumber: i})
		}
		e.mu.Unlock()
	}
	var b strings.Builder
	type gpuLine struct {
		labels string
		r      gpuReading
	}
	var gpus []gpuLine
	index := 0
	for _, r := range readings {
		for g := range r.gpus {
			gpus = append(gpus, gpuLine{r: r, labels: fmt.Sprintf(
				`gpu="%d",UUID="GPU-%08x-0000-4000-8000-%012x",pci_bus_id="00000000:%02X:00.0",device="nvidia%d",modelName="llm-sim GPU (%s)",Hostname="llm-sim"`,
				index, r.modelNumber, g, 0x10+index, index, promLabel(r.model))})
			index++
		}
	}
	b.WriteString("# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n")
	b.WriteString("# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).\n# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n")
	for _, g := range gpus {
		fmt.Fprintf(&b, "DCGM_FI_DEV_POWER_USAGE{%s} %.6f\n", g.labels, g.r.w/float64(g.r.gpus))
	}
	b.WriteString("# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy consumption since boot (in mJ).\n# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n")
	for _, g := range gpus {
		if !g.r.gaugeOnly {
			fmt.Fprintf(&b, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{%s} %.0f\n", g.labels, energyBaseMJ+g.r.joules*1e3/float64(g.r.gpus))
		}
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write([]byte(b.String()))
}
