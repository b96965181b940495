package report

import (
	"fmt"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/servermetrics"
)

// The GPUs' energy per capacity window: the level a search tries is the
// load a team would run, so its joules per output token at that level,
// beside its latency, say what the capacity costs. The serverMetrics views
// carry a window per capacity window (CapacitySpans names them); the rows
// take the exporters' energy from them.

// capacityWindowName names a capacity window's server window.
func capacityWindowName(index int) string { return fmt.Sprintf("capacity window %d", index) }

// CapacitySpans are the capacity windows' measured spans in wall-clock time
// (origin is the search's start, which their seconds count from): from the
// end of each window's warm-up (its start, when it stopped within it) to
// its end.
func CapacitySpans(c *runrecord.Capacity, origin time.Time) []servermetrics.Span {
	if c == nil {
		return nil
	}
	at := func(s float64) time.Time { return origin.Add(time.Duration(s * float64(time.Second))) }
	out := make([]servermetrics.Span, 0, len(c.Windows))
	for _, w := range c.Windows {
		from := w.StartS + c.WarmupS
		if from >= w.EndS {
			from = w.StartS
		}
		out = append(out, servermetrics.Span{Name: capacityWindowName(w.Index), From: at(from), To: at(w.EndS)})
	}
	return out
}

// addCapacityEnergy fills each capacity row's energy from the GPU
// exporters' windows of the same name (rows no exporter covers keep none).
func addCapacityEnergy(c *runrecord.Capacity, views []servermetrics.View) {
	if c == nil {
		return
	}
	for i := range c.Windows {
		c.Windows[i].Energy = capacityEnergy(capacityWindowName(c.Windows[i].Index), views)
	}
}

// capacityEnergy sums the exporters' energy over the window named name and
// divides it by the output tokens and requests their clients' engines
// counted (each client's once, as two exporters of one client attribute
// the same engines' counts).
func capacityEnergy(name string, views []servermetrics.View) *runrecord.CapacityEnergy {
	var out *runrecord.CapacityEnergy
	var joules, power, tokens, requests float64
	knownJ, knownW, knownTok, knownReq := true, true, true, true
	counted := map[string]bool{}
	for i := range views {
		e := exporterWindow(views[i], name)
		if e == nil {
			continue
		}
		if out == nil {
			out = &runrecord.CapacityEnergy{}
		}
		joules, knownJ = addKnown(joules, e.Joules, knownJ)
		power, knownW = addKnown(power, e.AvgPowerW, knownW)
		if e.Unattributed != "" && out.Unattributed == "" {
			out.Unattributed = e.Unattributed
		}
		if counted[views[i].Client] {
			continue
		}
		counted[views[i].Client] = true
		tokens, knownTok = addKnown(tokens, e.OutputTokens, knownTok)
		requests, knownReq = addKnown(requests, e.Requests, knownReq)
	}
	if out == nil {
		return nil
	}
	if knownJ {
		out.Joules = &joules
		if knownTok && tokens > 0 {
			out.JPerOutputToken = ptrTo(joules / tokens)
		}
		if knownReq && requests > 0 {
			out.JPerRequest = ptrTo(joules / requests)
		}
	}
	if knownW {
		out.AvgPowerW = &power
	}
	return out
}

// exporterWindow is a GPU exporter's energy over the window named name.
func exporterWindow(v servermetrics.View, name string) *servermetrics.EnergyStats {
	for i := range v.CapacityWindows {
		if w := &v.CapacityWindows[i]; w.Name == name && w.Energy != nil {
			return w.Energy
		}
	}
	return nil
}

// addKnown adds p to sum while every figure so far was known.
func addKnown(sum float64, p *float64, known bool) (float64, bool) {
	if !known || p == nil {
		return sum, false
	}
	return sum + *p, true
}

func ptrTo(v float64) *float64 { return &v }
