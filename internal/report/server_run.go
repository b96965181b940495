package report

import "github.com/llmstream/xk6-llmstream/internal/servermetrics"

// serverRun is the part of the run a view sits beside: its client's calls
// when the run had several clients.
func serverRun(r *Run, v servermetrics.View) *Run {
	if r.PerClient() && v.Client != "" {
		return r.Client(v.Client)
	}
	return r
}
