package runrecord

import (
	"time"
)

// Comparison is this run against a stored baseline, per category, metric and
// percentile: change one variable at a time against a fixed baseline (docs/guide.md).
type Comparison struct {
	BaselineStart time.Time      `json:"baseline_start"`
	BaselineMeta  map[string]any `json:"baseline_meta,omitempty"`
	// Differences is how this run was made differently from the baseline
	// ("load.default.vus 50 vs 20": this run's value first). Verdicts across
	// different set-ups measure the set-up too; renderers show this above them.
	Differences []string        `json:"differences,omitempty"`
	Confidence  float64         `json:"confidence"`
	Resamples   int             `json:"resamples"`
	Rows        []ComparisonRow `json:"rows"`
	// Server is the servers' own figures against the baseline's
	// (serverMetrics on both sides; compare.Servers).
	Server []ServerChange `json:"server,omitempty"`
	// Capacity is the capacity search's answer against the baseline's
	// (both runs searched; compare.Capacity).
	Capacity *CapacityChange `json:"capacity,omitempty"`
	// Jobs is the conversations' and agent jobs' times against the
	// baseline's, per kind and category (compare.Jobs).
	Jobs []JobChange `json:"jobs,omitempty"`
}

// ComparisonRow is one figure compared. Times in ms; a positive delta is slower.
type ComparisonRow struct {
	Client   string  `json:"client,omitempty"` // with several clients on both sides
	Category string  `json:"category"`
	Metric   string  `json:"metric"`
	Stat     string  `json:"stat"` // "p50", "p95", "p99"
	Baseline float64 `json:"baseline"`
	Current  float64 `json:"current"`
	Delta    float64 `json:"delta"`
	DeltaPct float64 `json:"delta_pct"`
	HasCI    bool    `json:"has_ci"`
	CILow    float64 `json:"ci_low"`
	CIHigh   float64 `json:"ci_high"`
	Verdict  string  `json:"verdict"` // VerdictBetter, VerdictWorse, VerdictSame
}

// Label names the row's calls: "category", or "client · category".
func (row ComparisonRow) Label() string {
	if row.Client == "" {
		return row.Category
	}
	return row.Client + " · " + row.Category
}

// The verdicts of a comparison row.
const (
	VerdictBetter = "better"
	VerdictWorse  = "worse"
	VerdictSame   = "no significant change"
)

// DifferencesLine is the comparison's warning line, "" when the runs were made alike.
func (c *Comparison) DifferencesLine() string {
	if c == nil || len(c.Differences) == 0 {
		return ""
	}
	return describeDifferences(c.Differences)
}

// CapacityChange is this run's capacity against the baseline's. The two
// searches' answers are each known to within their precision, so a change
// counts only past both precisions together.
type CapacityChange struct {
	Unit     string   `json:"unit"`
	Baseline *float64 `json:"baseline"` // null: the baseline's search found none (below min)
	Current  *float64 `json:"current"`
	// BaselineOutcome and Outcome are the searches' outcomes ("found",
	// "below_min", "above_max", "unfinished").
	BaselineOutcome string `json:"baseline_outcome"`
	Outcome         string `json:"outcome"`
	// DeltaPct is (current − baseline) / baseline; null when either is unknown.
	DeltaPct *float64 `json:"delta_pct"`
	// Tolerance is the change below which the answers are the same: the sum
	// of the two searches' precisions.
	Tolerance float64 `json:"tolerance"`
	Verdict   string  `json:"verdict"` // VerdictBetter, VerdictWorse, VerdictSame
	// Note says why the answers cannot be set side by side, when they
	// cannot (another model or objectives): then Verdict is VerdictSame.
	Note string `json:"note,omitempty"`
}

// ServerChange is one server figure of this run against the baseline's view
// of the same endpoint. Baseline and Current are in Unit.
type ServerChange struct {
	Endpoint string  `json:"endpoint"`
	Client   string  `json:"client,omitempty"`
	Figure   string  `json:"figure"` // "queue mean", "requests_waiting p95", "finished per s", …
	Unit     string  `json:"unit"`   // "ms", "requests", "share", "per s", "per request"
	Baseline float64 `json:"baseline"`
	Current  float64 `json:"current"`
	Verdict  string  `json:"verdict"` // VerdictBetter, VerdictWorse, VerdictSame
}

func (c ServerChange) Label() string {
	if c.Client == "" {
		return c.Endpoint
	}
	return c.Client + " · " + c.Endpoint
}

// JobChange is one job figure of a kind and category, this run against the
// baseline. Times in ms.
type JobChange struct {
	Kind     string  `json:"kind"`
	Category string  `json:"category"`
	Stage    string  `json:"stage,omitempty"` // the load stage ("8 VUs"), "" for the whole run's jobs
	Figure   string  `json:"figure"`          // "duration p50", "duration p95", "model mean"
	Baseline float64 `json:"baseline"`
	Current  float64 `json:"current"`
	DeltaPct float64 `json:"delta_pct"`
	Verdict  string  `json:"verdict"` // VerdictBetter, VerdictWorse, VerdictSame
}

func (c JobChange) Label() string {
	if c.Stage != "" {
		return c.Kind + " · " + c.Category + " · " + c.Stage
	}
	return c.Kind + " · " + c.Category
}
