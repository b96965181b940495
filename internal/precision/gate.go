package precision

import (
	"math"
	"sync"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/quantile"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
)

// Confidence of every target's interval.
const Confidence = 0.95

// Outcomes of a gate.
const (
	OutcomeRunning = "running"
	OutcomeMet     = "met"
	OutcomeCap     = "cap" // the time cap came before every target was met
)

// Gate collects the calls' figures and says when every target is known to
// its margin or the time cap has passed. Safe for concurrent use: calls
// finish on many goroutines.
type Gate struct {
	targets []Target
	limit   time.Duration // the time cap, from the first call to Open

	mu      sync.Mutex
	start   time.Time
	sk      []*sketch.Sketch
	met     []time.Duration // since start, when each target was first met; <0 while not
	outcome string
	endedAt time.Duration
}

// New returns a gate for targets with a time cap (0: none, the scenario's
// own duration ends it).
func New(targets []Target, limit time.Duration) *Gate {
	g := &Gate{targets: targets, limit: limit, outcome: OutcomeRunning,
		sk: make([]*sketch.Sketch, len(targets)), met: make([]time.Duration, len(targets))}
	for i := range targets {
		g.sk[i] = sketch.New(sketch.FineAlpha)
		g.met[i] = -1
	}
	return g
}

// Finish adds a finished call: each target's figure read from its record by
// the rule the report uses (record.Figures), a value the call did not
// measure left out.
func (g *Gate) Finish(c *record.Call, now time.Time) {
	for i, t := range g.targets {
		if v, ok := record.Dist(t.Figure).Row().Kept(c); ok {
			g.Observe(i, v, now)
		}
	}
}

// Targets are the gate's targets, in a stable order.
func (g *Gate) Targets() []Target { return g.targets }

// Open says whether another call should be made, starting the clock at the
// first ask. False once the gate is met or its cap has passed: a pool of VUs
// looping on it then ends its scenario.
func (g *Gate) Open(now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.start.IsZero() {
		g.start = now
	}
	if g.outcome == OutcomeRunning && g.limit > 0 && now.Sub(g.start) >= g.limit {
		g.outcome, g.endedAt = OutcomeCap, now.Sub(g.start)
	}
	return g.outcome == OutcomeRunning
}

// Observe adds one call's value of target i (ms); an unknown value (the
// call did not measure it) is left out, as every figure's percentile leaves
// it out. The gate is met at the first call that leaves every target known.
func (g *Gate) Observe(i int, ms float64, now time.Time) {
	if math.IsNaN(ms) || math.IsInf(ms, 0) {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sk[i].Add(ms)
	if g.outcome != OutcomeRunning || g.start.IsZero() {
		return
	}
	at := now.Sub(g.start)
	if g.met[i] < 0 && g.targets[i].knownIn(g.sk[i]) {
		g.met[i] = at
	}
	for _, m := range g.met {
		if m < 0 {
			return
		}
	}
	g.outcome, g.endedAt = OutcomeMet, at
}

// knownIn says whether s bounds t's percentile within its margin.
func (t Target) knownIn(s *sketch.Sketch) bool {
	st := t.state(s)
	return st.Bounded && st.HalfWidth <= t.allowed(st.Estimate)
}

func (t Target) allowed(estimate float64) float64 {
	if t.Relative {
		return t.Margin * estimate
	}
	return t.Margin
}

// State is what a target's calls say so far.
type State struct {
	Calls    uint64
	Estimate float64 // ms; NaN without calls
	Lo, Hi   float64 // the interval's ends (ms), the sketch's own error added; NaN where unbounded
	Bounded  bool    // both ends are calls of the sample
	// HalfWidth is the farther end's distance from the estimate (ms); +Inf unbounded.
	HalfWidth float64
}

func (t Target) state(s *sketch.Sketch) State {
	n := int(s.Count()) // #nosec G115 -- a count of calls fits an int
	st := State{Calls: s.Count(), Estimate: s.Quantile(t.Quantile), Lo: math.NaN(), Hi: math.NaN(), HalfWidth: math.Inf(1)}
	iv := quantile.TwoSided(n, t.Quantile, Confidence)
	if iv.BoundedBelow() {
		st.Lo = s.Quantile(quantile.RankQuantile(iv.Lo, n)) * (1 - s.Alpha)
	}
	if iv.BoundedAbove() {
		st.Hi = s.Quantile(quantile.RankQuantile(iv.Hi, n)) * (1 + s.Alpha)
	}
	if st.Bounded = iv.Bounded(); st.Bounded {
		st.HalfWidth = math.Max(st.Estimate-st.Lo, st.Hi-st.Estimate)
	}
	return st
}

// TargetResult is one target in the gate's result.
type TargetResult struct {
	Target
	State
	Met   bool
	MetAt time.Duration // since the gate opened; meaningful when Met
}

// Result is the gate so far: its outcome, when it ended (since the first
// ask) and each target.
type Result struct {
	Outcome string
	Limit   time.Duration
	EndedAt time.Duration // 0 while running
	Targets []TargetResult
}

// Result reads the gate.
func (g *Gate) Result() Result {
	g.mu.Lock()
	defer g.mu.Unlock()
	r := Result{Outcome: g.outcome, Limit: g.limit, EndedAt: g.endedAt, Targets: make([]TargetResult, len(g.targets))}
	for i, t := range g.targets {
		r.Targets[i] = TargetResult{Target: t, State: t.state(g.sk[i]), Met: g.met[i] >= 0, MetAt: max(g.met[i], 0)}
	}
	return r
}
