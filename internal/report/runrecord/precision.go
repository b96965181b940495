package runrecord

// Precision is what a precision gate (Precision.until) found: whether every
// target percentile became known to its margin before the time cap, and
// when. It is the run record's "precision" section. A figure not measured
// (an interval end with too few calls) is null, never 0.
type Precision struct {
	// Outcome is "met" (every target known to its margin), "cap" (the time
	// cap came first) or "running" (the test ended first).
	Outcome    string            `json:"outcome"`
	Confidence float64           `json:"confidence"`
	CapS       *float64          `json:"cap_s"`   // the time cap, seconds (null: the scenario's duration)
	EndedS     *float64          `json:"ended_s"` // when the gate closed, seconds after its first call (null: still open)
	Targets    []PrecisionTarget `json:"targets"`
	// Segment is the execution segment this instance ran ("0:1" alone): each
	// instance decides from its own calls; a merged record lists them.
	Segment   string              `json:"segment,omitempty"`
	Instances []PrecisionInstance `json:"instances,omitempty"`
}

// PrecisionTarget is one target and what its calls said when the gate read it.
type PrecisionTarget struct {
	Target   string   `json:"target"` // as written: "ttft p95±5%"
	Figure   string   `json:"figure"`
	Quantile float64  `json:"quantile"`
	Margin   float64  `json:"margin"`   // a share of the estimate when relative, else ms
	Relative bool     `json:"relative"` // Margin is a share of the estimate
	Met      bool     `json:"met"`
	MetS     *float64 `json:"met_s"` // when it was first met, seconds after the gate's first call
	Calls    uint64   `json:"calls"`
	Estimate *float64 `json:"estimate_ms"`
	Lo       *float64 `json:"lo_ms"` // the 95 % interval's ends (null: too few calls to bound it)
	Hi       *float64 `json:"hi_ms"`
}

// PrecisionInstance is one instance's gate in a merged record.
type PrecisionInstance struct {
	Segment string   `json:"segment"`
	Outcome string   `json:"outcome"`
	EndedS  *float64 `json:"ended_s"`
}
