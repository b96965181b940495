package report

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// Exclude says which calls stay out of the report: a warm-up window, whole
// scenarios, calls carrying a tag, and the calls of setup() and teardown().
// The collector is fed while the test runs, so this is set before the first
// call arrives (Options.Exclude); what was left out is counted by reason and
// stated in every rendering and the run record.
type Exclude struct {
	// Warmup leaves out the calls that started in the first Warmup of the test
	// (counted from the test start k6 reports, else from the first call).
	Warmup time.Duration
	// Scenarios leaves out the calls of these k6 scenarios.
	Scenarios []string
	// Tags leaves out calls whose tag has the given value (e.g. phase: warmup).
	Tags map[string]string
	// KeepSetup keeps the calls made in setup() and teardown(), which are left
	// out by default: they run before and after the load and measure neither.
	KeepSetup bool
}

// The phases of a k6 test an Observation can come from.
const (
	PhaseSetup    = "setup"
	PhaseTeardown = "teardown"
)

// validate names the first option that cannot be applied.
func (e Exclude) validate() error {
	if e.Warmup < 0 {
		return fmt.Errorf("warmup must not be negative (got %s)", e.Warmup)
	}
	for _, s := range e.Scenarios {
		if s == "" {
			return fmt.Errorf("excludeScenarios: an empty scenario name")
		}
	}
	for k := range e.Tags {
		if k == "" {
			return fmt.Errorf("excludeTags: an empty tag name")
		}
	}
	return nil
}

// excluder applies an Exclude to observations; the collector's lock guards it.
type excluder struct {
	rules     Exclude
	scenarios map[string]bool
	tagKeys   []string  // rules.Tags' names, sorted once (the reason names the first match)
	origin    time.Time // test start, once known
	counts    map[string]uint64
	// byClient is counts per client (Observation.Name): a client's server
	// counted its own left-out calls, not the other clients'.
	byClient map[string]map[string]uint64
	// reach is the left-out calls' requests by whether they reached the
	// server, in all and per client.
	reach         runrecord.ServerReach
	reachByClient map[string]*runrecord.ServerReach
}

func newExcluder(e Exclude) *excluder {
	x := &excluder{rules: e, scenarios: map[string]bool{}, counts: map[string]uint64{}, byClient: map[string]map[string]uint64{},
		reachByClient: map[string]*runrecord.ServerReach{}}
	for _, s := range e.Scenarios {
		x.scenarios[s] = true
	}
	x.tagKeys = slices.Sorted(maps.Keys(e.Tags))
	return x
}

// reason says why o stays out of the report, or "" when it counts.
func (x *excluder) reason(o *Observation) string {
	switch {
	case o.Phase == PhaseSetup && !x.rules.KeepSetup:
		return "setup()"
	case o.Phase == PhaseTeardown && !x.rules.KeepSetup:
		return "teardown()"
	case x.scenarios[o.Scenario]:
		return "scenario " + o.Scenario
	}
	for _, k := range x.tagKeys {
		if o.Tag == nil {
			break
		}
		if v, ok := o.Tag(k); ok && v == x.rules.Tags[k] {
			return "tag " + k + "=" + v
		}
	}
	if x.rules.Warmup > 0 && o.Phase == "" {
		if x.origin.IsZero() || (!o.TestStart.IsZero() && o.TestStart.Before(x.origin)) {
			if x.origin = o.TestStart; x.origin.IsZero() {
				x.origin = o.Start // k6 did not say when the test started: the first call did
			}
		}
		if o.Start.Before(x.origin.Add(x.rules.Warmup)) {
			return "warm-up window"
		}
	}
	return ""
}

// leaveOut counts o under its reason and says whether it is left out.
func (x *excluder) leaveOut(o *Observation) bool {
	r := x.reason(o)
	if r != "" {
		x.counts[r]++
		if x.byClient[o.Name] == nil {
			x.byClient[o.Name] = map[string]uint64{}
		}
		x.byClient[o.Name][r]++
		reach := reachOf(o)
		x.reach.Add(reach)
		if x.reachByClient[o.Name] == nil {
			x.reachByClient[o.Name] = &runrecord.ServerReach{}
		}
		x.reachByClient[o.Name].Add(reach)
	}
	return r != ""
}

func (x *excluder) snapshot() runrecord.Exclusions {
	e := x.snapshotOf(x.counts)
	e.Reach = x.reach
	return e
}

// clientSnapshot is the rules with one client's counts.
func (x *excluder) clientSnapshot(name string) runrecord.Exclusions {
	counts := x.byClient[name]
	if counts == nil {
		counts = map[string]uint64{}
	}
	e := x.snapshotOf(counts)
	if r := x.reachByClient[name]; r != nil {
		e.Reach = *r
	}
	return e
}

func (x *excluder) snapshotOf(counts map[string]uint64) runrecord.Exclusions {
	e := runrecord.Exclusions{Scenarios: x.rules.Scenarios, Tags: maps.Clone(x.rules.Tags), SetupKept: x.rules.KeepSetup,
		ByReason: maps.Clone(counts)}
	if x.rules.Warmup > 0 {
		e.Warmup = x.rules.Warmup.String()
		if !x.origin.IsZero() {
			e.IncludedFrom = x.origin.Add(x.rules.Warmup)
		}
	}
	for _, n := range counts {
		e.Calls += n
	}
	return e
}
