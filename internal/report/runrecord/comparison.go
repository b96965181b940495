package runrecord

import (
	"fmt"
	"strings"
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
	// Confounded is set when the two runs saw different prefix-cache
	// states: a rerun against a cache the first run warmed is faster
	// without the service changing, so no verdict here can be put down to
	// the one variable changed (compare.Confounding).
	Confounded *Confounding `json:"confounded,omitempty"`
}

// Confounding is why a comparison is confounded: the cache hit rates
// that lie further apart than Margin.
type Confounding struct {
	Margin float64      `json:"margin"` // a share: 0.1 is 10 percentage points
	By     []CacheState `json:"by"`
}

// CacheState is one prefix-cache figure on both sides of a comparison.
type CacheState struct {
	// Source is "client" (the share of calls the server said it served
	// partly from its cache) or "server" (its own prefix-cache hit ratio,
	// in prompt tokens).
	Source   string  `json:"source"`
	Of       string  `json:"of,omitempty"` // the client, or the server endpoint
	Baseline float64 `json:"baseline"`
	Current  float64 `json:"current"`
}

func (s CacheState) String() string {
	what := "cache hit rate"
	if s.Source == "server" {
		what = "server prefix-cache hit ratio"
	}
	if s.Of != "" {
		what += " (" + s.Of + ")"
	}
	return fmt.Sprintf("%s %.1f%% vs %.1f%% in the baseline", what, 100*s.Current, 100*s.Baseline)
}

// ConfoundedLine is the comparison's warning that the runs' caches
// differed, "" when they did not.
func (c *Comparison) ConfoundedLine() string {
	if c == nil || c.Confounded == nil {
		return ""
	}
	parts := make([]string, len(c.Confounded.By))
	for i, s := range c.Confounded.By {
		parts[i] = s.String()
	}
	return fmt.Sprintf("confounded: the runs saw different prefix-cache states (%s; more than %.0f points apart), "+
		"so a change below may be the cache's, not the service's: start both runs cold (docs/guide.md#how-sure-is-this-number)",
		strings.Join(parts, "; "), 100*c.Confounded.Margin)
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
	Verdict  string  `json:"verdict"` // VerdictBetter, VerdictWorse, VerdictSame, VerdictTooFew
	// Calls and BaselineCalls are the calls each side's percentile rests
	// on; NeedCalls is the fewest on each side a verdict needs (set when
	// either side has fewer: the verdict is then VerdictTooFew).
	Calls         uint64 `json:"calls,omitempty"`
	BaselineCalls uint64 `json:"baseline_calls,omitempty"`
	NeedCalls     int    `json:"need_calls,omitempty"`
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
	// VerdictTooFew: a side has fewer calls than the percentile needs for
	// an interval (a p99 from fewer than 368), so the figures cannot be
	// told apart either way.
	VerdictTooFew = "too few calls"
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
