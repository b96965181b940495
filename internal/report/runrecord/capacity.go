package runrecord

import (
	"fmt"

	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
)

// Capacity is the answer of a capacity search (internal/capacity): the
// highest load that met every objective, how it was found, and every window
// the search ran. It is the run record's "capacity" section; the search
// fills it, the report renders it and a baseline comparison reads it.
//
// Levels are in the search's unit: requests per second for the open model
// (model "rate"), calls in flight for the closed one ("concurrency"). A
// figure a window could not measure is null, never 0.
type Capacity struct {
	Model   string  `json:"model"` // "rate" or "concurrency"
	Unit    string  `json:"unit"`  // "req/s" or "in flight"
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
	WindowS float64 `json:"window_s"` // the planned length of a window, seconds
	WarmupS float64 `json:"warmup_s"` // the start of each window left out of its figures, seconds
	// MaxWindowS is the longest a window was lengthened to while its calls
	// could not decide; SustainS the planned length of the window that
	// confirms the answer, seconds.
	MaxWindowS float64 `json:"max_window_s,omitempty"`
	SustainS   float64 `json:"sustain_s,omitempty"`
	Precision  float64 `json:"precision"`
	Share      float64 `json:"share"` // of the capacity, for the recommended level
	// Arrivals is the open model's arrival process ("poisson", "constant" or
	// "bursty"; empty with a trace or the closed model), CV its gaps'
	// coefficient of variation.
	Arrivals string  `json:"arrivals,omitempty"`
	CV       float64 `json:"cv,omitempty"`
	// Method names how the levels were chosen (bracketing, then the refining
	// rule), for readers of the record.
	Method     string              `json:"method"`
	Objectives []CapacityObjective `json:"objectives"`

	// Outcome is "found" (the boundary is known to the precision), "below_min"
	// (the first level already failed), "above_max" (the top passed), or
	// "unfinished" (the test ended, or the window budget ran out, first).
	Outcome string `json:"outcome"`
	// Capacity is the highest level that met every objective (null when none did).
	Capacity *float64 `json:"capacity"`
	// LastPass and FirstFail bracket the boundary (null when not reached).
	LastPass  *float64 `json:"last_pass"`
	FirstFail *float64 `json:"first_fail"`
	// Binding is the objective that failed first at the boundary (or, when
	// none failed, the one closest to its limit), as written ("ttft p95<2s").
	Binding string `json:"binding_objective,omitempty"`
	// Boundary is "smooth" (the figures rise gradually through the boundary)
	// or "cliff" (a small step in load moved them far); "" when not bracketed.
	Boundary string `json:"boundary,omitempty"`
	// Recommended is Share × Capacity: the level to plan production at.
	Recommended *float64 `json:"recommended"`
	// Confidence is how sure each verdict is (0.95): a window passed an
	// objective when its calls showed it held with this probability, failed
	// it when they showed it broken with it.
	Confidence float64 `json:"confidence,omitempty"`
	// SustainedS is how long the answer held in its sustain window, seconds
	// (null: no sustain window at the answer passed, as when unfinished).
	SustainedS *float64 `json:"sustained_s"`
	// UndecidedAbove lists the levels above the answer, under the lowest
	// level shown to fail, whose windows could not decide even at their
	// longest: counted as fails, so the capacity may be higher.
	UndecidedAbove []float64 `json:"undecided_above,omitempty"`
	// Trace is the trace whose arrivals the open model replayed (nil for
	// synthetic arrivals): each level is also a speed of that recording.
	Trace *CapacityTrace `json:"trace,omitempty"`
	// Segment is the execution segment this instance ran ("0:1" alone); a
	// merged record lists every instance's answer in Instances.
	Segment   string             `json:"segment,omitempty"`
	Instances []CapacityInstance `json:"instances,omitempty"`
	// Disagreement says how the instances' searches differed (merged records
	// only; "" when they took the same decisions).
	Disagreement string `json:"disagreement,omitempty"`

	Windows []CapacityWindow `json:"windows"`
}

// CapacityTrace is the trace a search replayed: a level of L req/s ran it
// at L / MeanRate times its recorded speed, keeping its bursts, lengths and
// shared prefixes.
type CapacityTrace struct {
	Name     string  `json:"name"`      // the file
	Rows     int     `json:"rows"`      // requests in one pass of it
	MeanRate float64 `json:"mean_rate"` // req/s as recorded
	// Scale and RecommendedScale are Capacity and Recommended as time
	// multipliers of the recording (null with them).
	Scale            *float64 `json:"scale"`
	RecommendedScale *float64 `json:"recommended_scale"`
}

// WithTraceScales fills the trace's multipliers from the answer (after the
// answer changes, as a merge may change it).
func (c *Capacity) WithTraceScales() {
	if c.Trace == nil || !(c.Trace.MeanRate > 0) {
		return
	}
	t := *c.Trace
	t.Scale, t.RecommendedScale = nil, nil
	if c.Capacity != nil {
		v := *c.Capacity / t.MeanRate
		t.Scale = &v
	}
	if c.Recommended != nil {
		v := *c.Recommended / t.MeanRate
		t.RecommendedScale = &v
	}
	c.Trace = &t
}

// CapacityObjective is one objective of the search.
type CapacityObjective struct {
	Text   string `json:"text"`             // as written: "ttft p95<2s"
	Client string `json:"client,omitempty"` // the calls it judges ("": every client's)
	Figure string `json:"figure"`           // ttft, tpot, e2e or errors
	// Quantile is the percentile judged (0.95), 0 for errors.
	Quantile float64 `json:"quantile,omitempty"`
	// Limit is in milliseconds for durations, a fraction for errors.
	Limit float64 `json:"limit"`
}

// CapacityWindow is one window of the search: its level and what it measured.
type CapacityWindow struct {
	Index int     `json:"index"`
	Phase string  `json:"phase"` // "bracket", "refine" or "sustain"
	Level float64 `json:"level"`
	// StartS and EndS are seconds from the search's start; EarlyStopS is
	// seconds into the window when over-saturation ended it (null: it ran
	// its length).
	StartS     float64  `json:"start_s"`
	EndS       float64  `json:"end_s"`
	EarlyStopS *float64 `json:"early_stop_s"`
	Verdict    string   `json:"verdict"` // "pass" or "fail"
	// Reason says why: the objectives it broke, "over-saturated: …" or
	// "not settled: …"; for a pass, the objective closest to its limit.
	Reason string `json:"reason"`
	// Settled is false when a figure was still trending when the window
	// ended (lengthened to its longest): such a window cannot pass.
	Settled  bool `json:"settled"`
	Extended bool `json:"extended,omitempty"` // lengthened because its calls could not decide yet
	// Undecided marks a fail that only says the calls could not tell: at its
	// longest, some objective's interval still held its limit (or a figure
	// was still trending). It counts as a fail, but the level may hold.
	Undecided bool `json:"undecided,omitempty"`
	// Carried is the rate the open model's calls came at in a passing window,
	// when random arrivals fell well under its level (null otherwise): the
	// pass speaks for that rate, and the search reads it there.
	Carried *float64 `json:"carried,omitempty"`
	// Margin is the largest of the objectives' normalised margins
	// (observed / limit − 1): ≤ 0 passes.
	Margin  float64          `json:"margin"`
	Margins []CapacityMargin `json:"margins"`

	Calls  int `json:"calls"`  // measured calls that finished (sent after the warm-up, up to the window's end)
	Failed int `json:"failed"` // of them, failed
	// Censored counts measured calls still in flight when the window was
	// judged: their age so far is in E2E as a lower bound, and each
	// objective's bounds count them on the unfavourable side.
	Censored int `json:"censored"`

	TTFT CapacityPercentiles `json:"ttft_ms"`
	TPOT CapacityPercentiles `json:"tpot_ms"`
	E2E  CapacityPercentiles `json:"e2e_ms"`
	// Throughput is measured calls finished per second of the measured span;
	// Goodput those that met every objective's limit (and did not fail);
	// GoodputRatio = goodput calls / all measured calls, errors included.
	Throughput      *float64 `json:"throughput"`
	Goodput         *float64 `json:"goodput"`
	GoodputRatio    *float64 `json:"goodput_ratio"`
	OutputTokensSec *float64 `json:"output_tokens_per_s"`

	// Energy is the GPUs' over the window's measured span, from the
	// serverMetrics GPU exporters (nil without one).
	Energy *CapacityEnergy `json:"energy,omitempty"`

	// Sketches are the window's distributions (ms), so a merge recomputes
	// the percentiles of several instances instead of averaging them.
	Sketches map[string]*sketch.Sketch `json:"sketches,omitempty"`
}

// CapacityEnergy is what the GPUs used over a capacity window's measured
// span (its warm-up's end to its end), summed over the GPU exporters, and
// what it cost per output token and per request the engines counted; a
// figure that cannot be known is null, never 0.
type CapacityEnergy struct {
	Joules          *float64 `json:"joules"`
	AvgPowerW       *float64 `json:"avg_power_w"`
	JPerOutputToken *float64 `json:"j_per_output_token"`
	JPerRequest     *float64 `json:"j_per_request"`
	// Unattributed says why the ratios are unknown ("" when known).
	Unattributed string `json:"unattributed,omitempty"`
}

// CapacityMargin is one objective's figure in a window, and the one-sided
// bounds (at the search's confidence) that decided it: it passed when Upper
// was within the limit, failed when Lower was past it.
type CapacityMargin struct {
	Objective string   `json:"objective"`
	Observed  *float64 `json:"observed"` // ms, or a fraction for errors; null: not measured
	Margin    float64  `json:"margin"`   // observed / limit − 1
	// Lower and Upper bound the true figure (null: the calls cannot bound
	// that side, as a p95 from fewer than 59 calls has no upper bound).
	Lower *float64 `json:"lower"`
	Upper *float64 `json:"upper"`
	// Verdict is "pass", "fail" or "undecided"; Calls the calls it rests on,
	// Censored those of them unfinished (or failed before the figure).
	Verdict  string `json:"verdict,omitempty"`
	Calls    int    `json:"calls"`
	Censored int    `json:"censored,omitempty"`
}

// CapacityPercentiles are a window's percentiles of one figure, ms.
type CapacityPercentiles struct {
	P50 *float64 `json:"p50"`
	P90 *float64 `json:"p90"`
	P95 *float64 `json:"p95"`
	P99 *float64 `json:"p99"`
	// The percentiles' 95 % intervals and those resting on too few calls,
	// as in MetricRecord.
	P50CI  *CI      `json:"p50_ci,omitempty"`
	P90CI  *CI      `json:"p90_ci,omitempty"`
	P95CI  *CI      `json:"p95_ci,omitempty"`
	P99CI  *CI      `json:"p99_ci,omitempty"`
	TooFew []string `json:"too_few,omitempty"`
}

// CapacityInstance is one instance's answer in a merged record.
type CapacityInstance struct {
	Segment  string    `json:"segment"`
	Outcome  string    `json:"outcome"`
	Capacity *float64  `json:"capacity"`
	Levels   []float64 `json:"levels"` // the windows' levels, in order
}

// Assurance says how sure the answer is, in the words the logs and the
// reports give it: " (95 % sure ttft p95<400ms holds at it; sustained
// 60 s)" (with several objectives, each is that sure: the verdicts are
// one per objective), and when windows above it could not decide, that the
// capacity may be higher. "" without an answer.
func (c *Capacity) Assurance() string {
	if c.Capacity == nil || c.Confidence == 0 {
		return ""
	}
	s := fmt.Sprintf(" (each objective %.0f %% sure to hold at it", 100*c.Confidence)
	if len(c.Objectives) == 1 {
		s = fmt.Sprintf(" (%.0f %% sure %s holds at it", 100*c.Confidence, c.Objectives[0].Text)
	}
	if c.SustainedS != nil {
		s += fmt.Sprintf("; sustained %.0f s", *c.SustainedS)
	} else {
		s += "; not yet sustained"
	}
	if len(c.UndecidedAbove) > 0 {
		s += fmt.Sprintf("; the calls at %.3g %s could not decide: it may be higher", c.UndecidedAbove[0], c.Unit)
	}
	return s + ")"
}

// MinUndecided says whether the range's minimum failed only as undecided:
// a "below min" then means its calls could not show the objectives hold
// there, not that they were shown broken.
func (c *Capacity) MinUndecided() bool {
	return len(c.UndecidedAbove) > 0 && c.UndecidedAbove[0] == c.Min
}
