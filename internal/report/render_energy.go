package report

import (
	"bytes"
	"fmt"
	"html"
	"strings"

	"github.com/llmstream/xk6-llmstream/internal/servermetrics"
)

// The GPUs' energy, from a GPU exporter's endpoint (NVIDIA DCGM): per
// window, the energy, the average power and what it cost per output token
// and per request of the same client's engines.

// energyLines are a view's energy lines, the run's first; none when the
// endpoint is no GPU exporter.
func energyLines(v servermetrics.View) []string {
	var out []string
	if len(v.GPUs) > 0 {
		models := map[string]bool{}
		var names []string
		for _, g := range v.GPUs {
			if g.Model != "" && !models[g.Model] {
				models[g.Model] = true
				names = append(names, g.Model)
			}
		}
		line := fmt.Sprintf("GPUs: %d", len(v.GPUs))
		if len(names) > 0 {
			line += " (" + strings.Join(names, ", ") + ")"
		}
		if len(v.LostGPUs) > 0 {
			line += "; vanished during the test: " + strings.Join(v.LostGPUs, ", ")
		}
		out = append(out, line)
	}
	add := func(label string, w *servermetrics.Window) {
		if w == nil || w.Energy == nil {
			return
		}
		out = append(out, fmt.Sprintf("GPU energy (%s): %s", label, energyText(w.Energy)))
	}
	add("run", v.Run)
	add("after warm-up", v.Measured)
	for i := range v.Stages {
		add(v.Stages[i].Name, &v.Stages[i])
	}
	return out
}

func orNull(p *float64, format string) string {
	if p == nil {
		return "unknown"
	}
	return fmt.Sprintf(format, *p)
}

// energyText is one window's energy in a line.
func energyText(e *servermetrics.EnergyStats) string {
	s := fmt.Sprintf("%s, average %s over %d GPU(s)", orNull(e.Joules, "%.1f J"), orNull(e.AvgPowerW, "%.1f W"), e.GPUs)
	if len(e.Sources) > 0 {
		s += " (" + strings.Join(e.Sources, ", ") + ")"
	}
	s += fmt.Sprintf("; %s per output token, %s per request", orNull(e.JPerOutputToken, "%.4g J"), orNull(e.JPerRequest, "%.4g J"))
	if e.Unattributed != "" {
		s += " — " + e.Unattributed
	}
	if len(e.PartialGPUs) > 0 {
		s += "; covered in part: " + strings.Join(e.PartialGPUs, ", ")
	}
	if e.Resets > 0 {
		s += fmt.Sprintf("; %d counter restart(s), counted from 0", e.Resets)
	}
	return s
}

// writeEnergyHTML is the same lines as the text.
func writeEnergyHTML(b *bytes.Buffer, v servermetrics.View) {
	for _, l := range energyLines(v) {
		fmt.Fprintf(b, "<p class=\"energy\">%s</p>\n", html.EscapeString(l))
	}
}
