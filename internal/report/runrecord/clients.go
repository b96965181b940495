package runrecord

import (
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

func (k RouteKey) Label() string {
	parts := []string{ClientLabel(k.Client)}
	if k.Route != "" {
		parts = append(parts, k.Route)
	}
	if k.Model != "" {
		parts = append(parts, k.Model)
	}
	return strings.Join(parts, " · ")
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
	// The percentiles' 95 % intervals and those resting on too few calls,
	// as in MetricRecord.
	TTFTP50CI         *CI      `json:"ttft_p50_ci,omitempty"`
	TTFTP95CI         *CI      `json:"ttft_p95_ci,omitempty"`
	E2EP50CI          *CI      `json:"e2e_p50_ci,omitempty"`
	TokensPerSecP50CI *CI      `json:"tokens_per_sec_p50_ci,omitempty"`
	TooFew            []string `json:"too_few,omitempty"`
}

// PairedComparison is clients A and B on the same dataset items.
type PairedComparison struct {
	A     string      `json:"a"`
	B     string      `json:"b"`
	Pairs uint64      `json:"pairs"`
	Rows  []PairedRow `json:"rows"`
}

// PairedRow is one metric: the medians on each side and the median of the
// per-item differences B − A with its 95 % interval.
type PairedRow struct {
	Metric     string  `json:"metric"`
	Pairs      int     `json:"pairs"`
	MedianA    float64 `json:"median_a"`
	MedianB    float64 `json:"median_b"`
	MedianDiff float64 `json:"median_diff"` // B − A
	CILow      float64 `json:"ci_low"`
	CIHigh     float64 `json:"ci_high"`
	RelDiff    float64 `json:"rel_diff"` // MedianDiff / MedianA
	Verdict    string  `json:"verdict"`
}
