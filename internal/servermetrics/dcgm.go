package servermetrics

import (
	"math"
	"sort"

	dto "github.com/prometheus/client_model/go"

	"github.com/llmstream/xk6-llmstream/internal/energy"
)

// NVIDIA's DCGM exporter: one series per GPU of each field, labelled gpu
// (the index on its host), UUID, pci_bus_id, device, modelName, Hostname
// (and driver labels on some builds, in no fixed order).
const (
	// dcgmPower is the power draw, W (a gauge).
	dcgmPower = "DCGM_FI_DEV_POWER_USAGE"
	// dcgmEnergy is the energy used since the driver loaded, mJ: typed
	// counter, yet named without "_total" (the exporter writes its field
	// names as they are). Read typed gauge or untyped too (older builds,
	// custom counter lists).
	dcgmEnergy = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"
)

// GPUPower is the GPUs' power draw summed, W, sampled at every scrape (a
// gauge quantity); Energy the joules they used since the scrape before (a
// k6 counter, from the energy meter).
const (
	GPUPower = "gpu_power_w"
	Energy   = "energy_j"
)

// GPU is one GPU an exporter reported, as its labels name it.
type GPU struct {
	ID       string `json:"id"` // the UUID, else host/index
	Index    string `json:"gpu,omitempty"`
	Model    string `json:"model,omitempty"`
	Hostname string `json:"hostname,omitempty"`
}

// gpuReadings are a scrape's DCGM series, one reading per GPU (a figure the
// scrape lacks, or that is not a finite number, is NaN: the meter then
// leaves that GPU's span to the next scrape that has it). found is false
// when the exposition has neither family.
func gpuReadings(fams map[string]*dto.MetricFamily, bad *nonFinite) (readings []energy.Reading, gpus []GPU, found bool) {
	byID := map[string]*energy.Reading{}
	info := map[string]GPU{}
	read := func(family string, set func(r *energy.Reading, v float64)) {
		f := fams[family]
		if f == nil || (f.GetType() != dto.MetricType_GAUGE && f.GetType() != dto.MetricType_COUNTER && f.GetType() != dto.MetricType_UNTYPED) {
			return
		}
		found = true
		for _, m := range f.GetMetric() {
			g := gpuOf(m)
			if g.ID == "" {
				continue
			}
			r := byID[g.ID]
			if r == nil {
				r = &energy.Reading{GPU: g.ID, PowerW: math.NaN(), EnergyMJ: math.NaN()}
				byID[g.ID] = r
				info[g.ID] = g
			}
			v := scalar(m)
			if bad.note(family, "", m, v) {
				continue
			}
			set(r, v)
		}
	}
	read(dcgmPower, func(r *energy.Reading, v float64) { r.PowerW = v })
	read(dcgmEnergy, func(r *energy.Reading, v float64) { r.EnergyMJ = v })
	if !found {
		return nil, nil, false
	}
	ids := make([]string, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		readings = append(readings, *byID[id])
		gpus = append(gpus, info[id])
	}
	return readings, gpus, true
}

// gpuOf names a series' GPU by its labels, whatever their order: the UUID
// when there is one (stable across exporter restarts and index changes),
// else the host and index.
func gpuOf(m *dto.Metric) GPU {
	var g GPU
	uuid := ""
	for _, lp := range m.GetLabel() {
		switch lp.GetName() {
		case "UUID", "uuid":
			uuid = lp.GetValue()
		case "gpu":
			g.Index = lp.GetValue()
		case "modelName":
			g.Model = lp.GetValue()
		case "Hostname":
			g.Hostname = lp.GetValue()
		}
	}
	switch {
	case uuid != "":
		g.ID = uuid
	case g.Index != "":
		g.ID = g.Hostname + "/" + g.Index
	}
	return g
}

// powerSum is the GPUs' power summed, when every GPU in the scrape gave it.
func powerSum(readings []energy.Reading) (float64, bool) {
	sum := 0.0
	for _, r := range readings {
		if !finite(r.PowerW) {
			return 0, false
		}
		sum += r.PowerW
	}
	return sum, len(readings) > 0
}
