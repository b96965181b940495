package servermetrics

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dcgmGPU is one GPU of the DCGM exporter fixture.
type dcgmGPU struct {
	index, uuid string
	powerW      float64
	energyMJ    float64 // < 0: the exporter does not export the counter
}

// dcgmBody writes an exposition as dcgm-exporter does: HELP and TYPE lines
// for every field it was told to collect, even one with no series; labels
// in its order (gpu, UUID, pci_bus_id, device, modelName, Hostname, then
// the driver's); the energy counter typed counter without "_total".
func dcgmBody(gpus ...dcgmGPU) []byte {
	var b strings.Builder
	labels := func(g dcgmGPU) string {
		return fmt.Sprintf(`gpu="%s",UUID="%s",pci_bus_id="00000000:%s:00.0",device="nvidia%s",modelName="NVIDIA H100 80GB HBM3",Hostname="node-7",DCGM_FI_DRIVER_VERSION="550.54.15"`,
			g.index, g.uuid, g.index, g.index)
	}
	b.WriteString("# HELP DCGM_FI_DEV_SM_CLOCK SM clock frequency (in MHz).\n# TYPE DCGM_FI_DEV_SM_CLOCK gauge\n")
	b.WriteString("# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n")
	for _, g := range gpus {
		fmt.Fprintf(&b, "DCGM_FI_DEV_GPU_UTIL{%s} 87\n", labels(g))
	}
	b.WriteString("# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).\n# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n")
	for _, g := range gpus {
		fmt.Fprintf(&b, "DCGM_FI_DEV_POWER_USAGE{%s} %.6f\n", labels(g), g.powerW)
	}
	b.WriteString("# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy consumption since boot (in mJ).\n# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n")
	for _, g := range gpus {
		if g.energyMJ >= 0 {
			fmt.Fprintf(&b, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{%s} %.0f\n", labels(g), g.energyMJ)
		}
	}
	return []byte(b.String())
}

const (
	uuidA = "GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52"
	uuidB = "GPU-0f2a6a1e-7d3b-4c1f-9b1e-2f4d5c6b7a89"
)

func TestDCGMFixtureReduces(t *testing.T) {
	t.Parallel()
	p, err := parseBody(dcgmBody(dcgmGPU{"0", uuidA, 312.5, 9e9}, dcgmGPU{"1", uuidB, 101.25, 4e9}), "text/plain; version=0.0.4")
	require.NoError(t, err)
	s := reduce(p.families, "")
	assert.Equal(t, EngineDCGM, s.engine, "DCGM families name the exporter, no 'unknown engine'")
	require.True(t, s.hasGPU)
	require.Len(t, s.gpus, 2)
	assert.Equal(t, uuidB, s.gpus[0].GPU, "sorted by UUID")
	assert.InDelta(t, 4e9, s.gpus[0].EnergyMJ, 0)
	assert.InDelta(t, 413.75, s.gauges[GPUPower], 1e-9)
	assert.Equal(t, dcgmEnergy, s.sources[Energy])
	assert.Equal(t, GPU{ID: uuidA, Index: "0", Model: "NVIDIA H100 80GB HBM3", Hostname: "node-7"}, s.gpuInfo[1])
	assert.Contains(t, s.other, "DCGM_FI_DEV_GPU_UTIL", "the exporter's other gauges are listed as found")
}

// scrapeNow takes one scrape outside the loop, as the loop would.
func scrapeNow(s *Scraper) { s.scrape(context.Background(), time.Second, false, false) }

// Energy from the counters' deltas, summed over the GPUs; a GPU that
// vanishes is one warning, named in the view, and counted for the part of
// the run its readings cover.
func TestDCGMCounterEnergyAndALostGPU(t *testing.T) {
	t.Parallel()
	ep := newEndpoint(t, dcgmBody(dcgmGPU{"0", uuidA, 300, 9e9}, dcgmGPU{"1", uuidB, 100, 4e9}))
	var warns warnings
	s, err := New(Config{URL: ep.url(), Source: "dcgm", Interval: time.Hour, Warn: warns.add})
	require.NoError(t, err)
	s.Start()
	ep.set(dcgmBody(dcgmGPU{"0", uuidA, 300, 9e9 + 600e3}, dcgmGPU{"1", uuidB, 100, 4e9 + 200e3}), 200, "")
	scrapeNow(s)
	ep.set(dcgmBody(dcgmGPU{"0", uuidA, 300, 9e9 + 900e3}), 200, "") // GPU 1 is gone
	scrapeNow(s)
	ep.set(dcgmBody(dcgmGPU{"0", uuidA, 300, 9e9 + 1500e3}), 200, "")
	s.Stop()

	v := s.View(nil)
	assert.Equal(t, EngineDCGM, v.Engine)
	assert.Equal(t, "dcgm", v.Source)
	require.NotNil(t, v.Run.Energy)
	e := v.Run.Energy
	require.NotNil(t, e.Joules)
	assert.InDelta(t, 1500+200, *e.Joules, 1e-6, "A's 1500 J and B's 200 J before it vanished")
	assert.Equal(t, []string{"counter"}, e.Sources)
	assert.Equal(t, 2, e.GPUs)
	assert.Equal(t, []string{uuidB}, e.PartialGPUs)
	assert.Equal(t, []string{uuidB}, v.LostGPUs)
	require.Len(t, v.GPUs, 2)
	assert.Equal(t, "node-7", v.GPUs[0].Hostname)
	lost := 0
	for _, m := range warns.all() {
		if strings.Contains(m, "vanished") {
			lost++
			assert.Contains(t, m, uuidB)
		}
	}
	assert.Equal(t, 1, lost, "one warning: %v", warns.all())
	assert.InDelta(t, *e.Joules/v.Run.To.Sub(v.Run.From).Seconds(), *e.AvgPowerW, 1e-9)
}

// Without the counter, the power gauge is integrated: a constant draw over
// the window is exactly power × time.
func TestDCGMPowerOnlyIsIntegrated(t *testing.T) {
	t.Parallel()
	ep := newEndpoint(t, dcgmBody(dcgmGPU{"0", uuidA, 250, -1}, dcgmGPU{"1", uuidB, 150, -1}))
	s, err := New(Config{URL: ep.url(), Interval: time.Hour})
	require.NoError(t, err)
	s.Start()
	time.Sleep(20 * time.Millisecond)
	scrapeNow(s)
	time.Sleep(20 * time.Millisecond)
	s.Stop()
	v := s.View(nil)
	e := v.Run.Energy
	require.NotNil(t, e)
	require.NotNil(t, e.Joules)
	assert.InDelta(t, 400*v.Run.To.Sub(v.Run.From).Seconds(), *e.Joules, 1e-9)
	assert.Equal(t, []string{"power"}, e.Sources)
	assert.Equal(t, dcgmPower+" (integrated)", v.Sources[Energy])
	assert.InDelta(t, 400, v.Run.Gauges[GPUPower].Mean, 1e-9)
}

// J per output token and per request: the exporter's energy over what the
// same client's engine endpoints (two replicas) counted in the same window;
// unknown, and saying why, without an engine endpoint.
func TestAttributeEnergy(t *testing.T) {
	t.Parallel()
	j := 1200.0
	dcgm := View{Client: "c", Engine: EngineDCGM, Run: &Window{Energy: &EnergyStats{Joules: &j}},
		Stages: []Window{{Name: "stage 1", Energy: &EnergyStats{Joules: ptr(300)}}}}
	replica := func(tokens, reqs, stageTokens float64) View {
		return View{Client: "c", Engine: EngineVLLM,
			Run:    &Window{Counters: map[string]float64{GenerationTokens: tokens, RequestsFinished: reqs}},
			Stages: []Window{{Name: "stage 1", Counters: map[string]float64{GenerationTokens: stageTokens, RequestsFinished: 1}}}}
	}
	other := View{Client: "other", Engine: EngineVLLM, Run: &Window{Counters: map[string]float64{GenerationTokens: 1e6}}}
	views := []View{dcgm, replica(1000, 10, 100), replica(2000, 20, 200), other}
	AttributeEnergy(views)
	e := views[0].Run.Energy
	require.NotNil(t, e.JPerOutputToken)
	assert.InDelta(t, 0.4, *e.JPerOutputToken, 1e-12)
	assert.InDelta(t, 40, *e.JPerRequest, 1e-12)
	assert.InDelta(t, 3000, *e.OutputTokens, 0)
	assert.Empty(t, e.Unattributed)
	assert.InDelta(t, 1.0, *views[0].Stages[0].Energy.JPerOutputToken, 1e-12)

	alone := []View{{Client: "c", Engine: EngineDCGM, Run: &Window{Energy: &EnergyStats{Joules: &j}}}}
	AttributeEnergy(alone)
	assert.Nil(t, alone[0].Run.Energy.JPerOutputToken)
	assert.Contains(t, alone[0].Run.Energy.Unattributed, "no engine endpoint")

	reset := []View{dcgm, replica(1000, 10, 100)}
	reset[1].Run.Resets = map[string]int{GenerationTokens: 1}
	AttributeEnergy(reset)
	assert.Nil(t, reset[0].Run.Energy.JPerOutputToken, "a restarted counter's delta is a lower bound: no ratio of it")
	assert.NotNil(t, reset[0].Run.Energy.JPerRequest)
}

// A capacity search's windows are attributed like stages: each exporter
// window over what the engines counted in the window of the same name.
func TestAttributeEnergyPerCapacityWindow(t *testing.T) {
	t.Parallel()
	dcgm := View{Client: "c", Engine: EngineDCGM, Run: &Window{Energy: &EnergyStats{Joules: ptr(900)}},
		CapacityWindows: []Window{{Name: "capacity window 0", Energy: &EnergyStats{Joules: ptr(200)}},
			{Name: "capacity window 1", Energy: &EnergyStats{Joules: ptr(600)}}}}
	engine := View{Client: "c", Engine: EngineVLLM, Run: &Window{Counters: map[string]float64{GenerationTokens: 3000, RequestsFinished: 30}},
		CapacityWindows: []Window{{Name: "capacity window 0", Counters: map[string]float64{GenerationTokens: 1000, RequestsFinished: 10}},
			{Name: "capacity window 1", Counters: map[string]float64{GenerationTokens: 1500, RequestsFinished: 12}}}}
	views := []View{dcgm, engine}
	AttributeEnergy(views)
	w0, w1 := views[0].CapacityWindows[0].Energy, views[0].CapacityWindows[1].Energy
	require.NotNil(t, w0.JPerOutputToken)
	assert.InDelta(t, 0.2, *w0.JPerOutputToken, 1e-12)
	assert.InDelta(t, 20, *w0.JPerRequest, 1e-12)
	assert.InDelta(t, 0.4, *w1.JPerOutputToken, 1e-12)
	assert.InDelta(t, 50, *w1.JPerRequest, 1e-12)
}

// Scraper.Windows are the history's windows over the spans (widened to the
// scrapes that bound them), each with the GPUs' energy; none before any
// scrape.
func TestScraperWindowsCarryEnergy(t *testing.T) {
	t.Parallel()
	ep := newEndpoint(t, dcgmBody(dcgmGPU{"0", uuidA, 250, -1}))
	s, err := New(Config{URL: ep.url(), Interval: time.Hour})
	require.NoError(t, err)
	assert.Empty(t, s.Windows([]Span{{Name: "capacity window 0", From: time.Now(), To: time.Now()}}), "no scrape yet")
	s.Start()
	time.Sleep(20 * time.Millisecond)
	scrapeNow(s)
	mid := time.Now()
	time.Sleep(20 * time.Millisecond)
	s.Stop()
	v := s.View(nil)
	ws := s.Windows([]Span{
		{Name: "capacity window 0", From: v.Run.From, To: v.Run.To},
		{Name: "capacity window 1", From: mid, To: v.Run.To},
	})
	require.Len(t, ws, 2)
	for _, w := range ws {
		require.NotNil(t, w.Energy, w.Name)
		require.NotNil(t, w.Energy.Joules, w.Name)
		assert.InDelta(t, 250*w.To.Sub(w.From).Seconds(), *w.Energy.Joules, 1e-9, w.Name)
	}
	assert.InDelta(t, *v.Run.Energy.Joules, *ws[0].Energy.Joules, 1e-9, "the run's span is the run")
	assert.Less(t, *ws[1].Energy.Joules, *ws[0].Energy.Joules, "the later part is a part")
}
