package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// Routes merges the run's calls per (client, route, model), sorted.
func (r *Run) Routes() ([]runrecord.RouteKey, map[runrecord.RouteKey]*Group) {
	out := map[runrecord.RouteKey]*Group{}
	for k, g := range r.groups {
		rk := runrecord.RouteKey{Client: k.Client, Route: k.Route, Model: k.Model}
		if out[rk] == nil {
			out[rk] = newGroup()
		}
		out[rk].merge(g)
	}
	keys := make([]runrecord.RouteKey, 0, len(out))
	for k := range out {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].Label() < keys[j].Label() })
	return keys, out
}

// routesToShow says whether the routes tell the reader anything: more than
// one, or calls a fallback served (when the primary failed every call, the
// fallback is the only route, and nothing else in the report names it).
func routesToShow(keys []runrecord.RouteKey) bool {
	for _, k := range keys {
		if k.Route == "fallback" {
			return true
		}
	}
	return len(keys) >= 2
}

// routeRecords lists the routes when there is something to tell apart.
func routeRecords(r *Run) []runrecord.RouteRecord {
	keys, groups := r.Routes()
	if !routesToShow(keys) {
		return nil
	}
	out := make([]runrecord.RouteRecord, 0, len(keys))
	for _, k := range keys {
		g := groups[k]
		out = append(out, runrecord.RouteRecord{
			RouteKey: k, Requests: g.Requests, Failures: g.Failures,
			TTFTP50: runrecord.FiniteOr0(q50(g.S(runrecord.MetricTTFT))), TTFTP95: runrecord.FiniteOr0(g.S(runrecord.MetricTTFT).Quantile(0.95)),
			E2EP50: runrecord.FiniteOr0(q50(g.S(runrecord.MetricE2E))), TokensPerSecP50: runrecord.FiniteOr0(q50(g.S(runrecord.MetricTokensPerSec))),
		})
	}
	return out
}

func writeRoutesText(b *strings.Builder, r *Run) {
	keys, groups := r.Routes()
	if !routesToShow(keys) {
		return
	}
	w := len("client · route · model")
	for _, k := range keys {
		w = max(w, len(k.Label()))
	}
	fmt.Fprintf(b, "\n  %-*s %9s %7s %9s %9s %9s %10s\n", w, "client · route · model", "requests", "failed", "TTFT p50", "TTFT p95", "E2E p50", "tok/s p50")
	for _, k := range keys {
		g := groups[k]
		fmt.Fprintf(b, "  %-*s %9d %7s %9s %9s %9s %10s\n", w, k.Label(), g.Requests, fmtPct(g.FailureRate()),
			fmtMS(q50(g.S(runrecord.MetricTTFT))), fmtMS(g.S(runrecord.MetricTTFT).Quantile(0.95)), fmtMS(q50(g.S(runrecord.MetricE2E))),
			fmtMetric(runrecord.MetricTokensPerSec, q50(g.S(runrecord.MetricTokensPerSec))))
	}
}
