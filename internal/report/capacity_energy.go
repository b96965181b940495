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
	var joules, power, tokens, requests []*float64
	counted := map[string]bool{}
	for i := range views {
		e := exporterWindow(views[i], name)
		if e == nil {
			continue
		}
		if out == nil {
			out = &runrecord.CapacityEnergy{}
		}
		joules, power = append(joules, e.Joules), append(power, e.AvgPowerW)
		if e.Unattributed != "" && out.Unattributed == "" {
			out.Unattributed = e.Unattributed
		}
		if counted[views[i].Client] {
			continue
		}
		counted[views[i].Client] = true
		tokens, requests = append(tokens, e.OutputTokens), append(requests, e.Requests)
	}
	if out == nil {
		return nil
	}
	out.AvgPowerW = sumKnown(power)
	if out.Joules = sumKnown(joules); out.Joules != nil {
		out.JPerOutputToken = perUnit(*out.Joules, sumKnown(tokens))
		out.JPerRequest = perUnit(*out.Joules, sumKnown(requests))
	}
	return out
}

// perUnit is joules per unit, unknown when the units are unknown or none.
func perUnit(joules float64, units *float64) *float64 {
	if units == nil || *units <= 0 {
		return nil
	}
	return ptrTo(joules / *units)
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

func ptrTo(v float64) *float64 { return &v }
