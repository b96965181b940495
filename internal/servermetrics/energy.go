package servermetrics

import (
	"fmt"
	"strings"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/energy"
)

// EnergyStats is what the GPUs of an exporter used over a window: from
// their energy counters' deltas, or their power integrated between scrapes
// when the exporter has no counter (internal/energy). A figure that cannot
// be known is null, never 0.
type EnergyStats struct {
	Joules    *float64 `json:"joules"`
	AvgPowerW *float64 `json:"avg_power_w"`
	GPUs      int      `json:"gpus"`
	// Sources say how the GPUs' energy was read: counter, power.
	Sources []string `json:"sources,omitempty"`
	// PartialGPUs appeared or vanished inside the window: counted for the
	// part of it their readings cover only.
	PartialGPUs []string `json:"partial_gpus,omitempty"`
	Resets      int      `json:"resets,omitempty"` // energy counters that began again from 0
	// OutputTokens and Requests are what the engine endpoints of the same
	// client generated and finished over the same window (Δ of their
	// counters, summed over replicas); JPerOutputToken and JPerRequest the
	// energy divided by them. Null, with Unattributed saying why, when no
	// engine endpoint counted them.
	OutputTokens    *float64 `json:"output_tokens,omitempty"`
	Requests        *float64 `json:"requests,omitempty"`
	JPerOutputToken *float64 `json:"j_per_output_token"`
	JPerRequest     *float64 `json:"j_per_request"`
	Unattributed    string   `json:"unattributed,omitempty"`
}

func ptr(v float64) *float64 { return &v }

// energyStats reads the meter over [from, to].
func energyStats(m *energy.Meter, from, to time.Time) *EnergyStats {
	sp := m.Energy(from, to)
	es := &EnergyStats{GPUs: sp.GPUs, Sources: sp.Sources, PartialGPUs: sp.Partial, Resets: sp.Resets}
	if finite(sp.Joules) {
		es.Joules = ptr(sp.Joules)
	}
	if finite(sp.AvgPowerW) {
		es.AvgPowerW = ptr(sp.AvgPowerW)
	}
	return es
}

// AttributeEnergy divides each exporter window's energy by what the engine
// endpoints of the same client counted over the window of the same name
// (the run, the part after the warm-up, each stage, each capacity window):
// J per output token and per request. The engines' windows are their own
// scrapes' nearest the boundaries, so the two agree to within a scrape
// interval at each end.
func AttributeEnergy(views []View) {
	for i := range views {
		v := &views[i]
		for _, w := range v.windows() {
			if w.Energy == nil {
				continue
			}
			attribute(w, views, v.Client)
		}
	}
}

// windows are the view's windows, the run first.
func (v *View) windows() []*Window {
	var out []*Window
	if v.Run != nil {
		out = append(out, v.Run)
	}
	if v.Measured != nil {
		out = append(out, v.Measured)
	}
	for i := range v.Stages {
		out = append(out, &v.Stages[i])
	}
	for i := range v.CapacityWindows {
		out = append(out, &v.CapacityWindows[i])
	}
	return out
}

// sameWindow is the view's window named like w (the run's has no name).
func (v *View) sameWindow(w *Window, isRun bool) *Window {
	if isRun {
		return v.Run
	}
	for _, x := range v.windows() {
		if x != v.Run && x.Name == w.Name {
			return x
		}
	}
	return nil
}

func attribute(w *Window, views []View, client string) {
	e := w.Energy
	e.OutputTokens, e.Requests, e.JPerOutputToken, e.JPerRequest, e.Unattributed = nil, nil, nil, nil, ""
	isRun := w.Name == ""
	var tokens, requests float64
	engines, noTokens, noRequests := 0, false, false
	for i := range views {
		o := &views[i]
		if o.Client != client || o.Engine == EngineDCGM || o.Run == nil {
			continue
		}
		_, gen := o.Run.Counters[GenerationTokens]
		_, fin := o.Run.Counters[RequestsFinished]
		if !gen && !fin {
			continue // a GPU exporter or an unknown one: no engine
		}
		engines++
		ow := o.sameWindow(w, isRun)
		if ow == nil {
			noTokens, noRequests = true, true
			continue
		}
		if v, ok := ow.Counters[GenerationTokens]; ok && ow.Resets[GenerationTokens] == 0 {
			tokens += v
		} else {
			noTokens = true
		}
		if v, ok := ow.Counters[RequestsFinished]; ok && ow.Resets[RequestsFinished] == 0 {
			requests += v
		} else {
			noRequests = true
		}
	}
	var why []string
	switch {
	case engines == 0:
		e.Unattributed = "no engine endpoint of this client counts output tokens or requests: name it in serverMetrics beside the exporter"
		return
	case e.Joules == nil:
		e.Unattributed = "the energy is unknown"
		return
	}
	if noTokens {
		why = append(why, "an engine endpoint's output tokens are unknown over this window (not exposed, or its counter restarted)")
	} else {
		e.OutputTokens = ptr(tokens)
		if tokens > 0 {
			e.JPerOutputToken = ptr(*e.Joules / tokens)
		}
	}
	if noRequests {
		why = append(why, "an engine endpoint's finished requests are unknown over this window")
	} else {
		e.Requests = ptr(requests)
		if requests > 0 {
			e.JPerRequest = ptr(*e.Joules / requests)
		}
	}
	e.Unattributed = strings.Join(why, "; ")
}

// gpuLostMessage is the one warning of a GPU that vanished from the exporter.
func gpuLostMessage(display string, lost []string) string {
	return fmt.Sprintf("serverMetrics %s: GPU %s vanished from the exporter: its energy after its last reading is unknown, "+
		"and the windows it left are counted for the part its readings cover", display, strings.Join(lost, ", "))
}
