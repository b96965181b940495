package report

import (
	"sort"

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
