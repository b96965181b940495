package report

import (
	"fmt"
	"sort"
	"strings"
)

// RouteKey is one way calls were served: by which client, over which route
// (primary or fallback) and which model. A routing test (small model first,
// large on fallback) or an A/B of two providers reads its answer here.
type RouteKey struct {
	Client string `json:"client"`
	Route  string `json:"route,omitempty"`
	Model  string `json:"model,omitempty"`
}

func (k RouteKey) label() string {
	parts := []string{clientLabel(k.Client)}
	if k.Route != "" {
		parts = append(parts, k.Route)
	}
	if k.Model != "" {
		parts = append(parts, k.Model)
	}
	return strings.Join(parts, " · ")
}

// Routes merges the run's calls per (client, route, model), sorted.
func (r *Run) Routes() ([]RouteKey, map[RouteKey]*Group) {
	out := map[RouteKey]*Group{}
	for k, g := range r.groups {
		rk := RouteKey{Client: k.Client, Route: k.Route, Model: k.Model}
		if out[rk] == nil {
			out[rk] = newGroup()
		}
		out[rk].merge(g)
	}
	keys := make([]RouteKey, 0, len(out))
	for k := range out {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].label() < keys[j].label() })
	return keys, out
}

// RouteRecord is one (client, route, model) in the run record.
type RouteRecord struct {
	RouteKey
	Requests        uint64  `json:"requests"`
	Failures        uint64  `json:"failures"`
	TTFTP50         float64 `json:"ttft_p50"`
	TTFTP95         float64 `json:"ttft_p95"`
	E2EP50          float64 `json:"e2e_p50"`
	TokensPerSecP50 float64 `json:"tokens_per_sec_p50"`
}

// routesToShow says whether the routes tell the reader anything: more than
// one, or calls a fallback served (when the primary failed every call, the
// fallback is the only route, and nothing else in the report names it).
func routesToShow(keys []RouteKey) bool {
	for _, k := range keys {
		if k.Route == "fallback" {
			return true
		}
	}
	return len(keys) >= 2
}

// routeRecords lists the routes when there is something to tell apart.
func routeRecords(r *Run) []RouteRecord {
	keys, groups := r.Routes()
	if !routesToShow(keys) {
		return nil
	}
	out := make([]RouteRecord, 0, len(keys))
	for _, k := range keys {
		g := groups[k]
		out = append(out, RouteRecord{
			RouteKey: k, Requests: g.Requests, Failures: g.Failures,
			TTFTP50: finiteOr0(q50(g.S(MetricTTFT))), TTFTP95: finiteOr0(g.S(MetricTTFT).Quantile(0.95)),
			E2EP50: finiteOr0(q50(g.S(MetricE2E))), TokensPerSecP50: finiteOr0(q50(g.S(MetricTokensPerSec))),
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
		w = max(w, len(k.label()))
	}
	fmt.Fprintf(b, "\n  %-*s %9s %7s %9s %9s %9s %10s\n", w, "client · route · model", "requests", "failed", "TTFT p50", "TTFT p95", "E2E p50", "tok/s p50")
	for _, k := range keys {
		g := groups[k]
		fmt.Fprintf(b, "  %-*s %9d %7s %9s %9s %9s %10s\n", w, k.label(), g.Requests, fmtPct(g.FailureRate()),
			fmtMS(q50(g.S(MetricTTFT))), fmtMS(g.S(MetricTTFT).Quantile(0.95)), fmtMS(q50(g.S(MetricE2E))),
			fmtMetric(MetricTokensPerSec, q50(g.S(MetricTokensPerSec))))
	}
}
