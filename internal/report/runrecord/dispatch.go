package runrecord

import (
	"math"
)

// Dispatch is what the test offered and did not send on time: the
// extension's schedules (credits claimed late, credits never sent) and k6's
// arrival-rate executors (iterations dropped at a tick with no free VU).
// Percentiles over the calls that were sent omit both, so the report says so
// instead of letting them look better exactly when the test fell behind.
type Dispatch struct {
	Schedules []ScheduleStats `json:"schedules,omitempty"`
	// K6Dropped is k6's dropped_iterations count; nil when k6 reported none
	// (no arrival-rate executor, or none dropped).
	K6Dropped *float64 `json:"k6_dropped_iterations,omitempty"`
	// K6Shortfall is what the dropping executor lacked, when k6 dropped
	// iterations and its summary had the figures (nil otherwise).
	K6Shortfall *VUShortfall `json:"k6_vu_shortfall,omitempty"`
}

// VUShortfall compares the VUs k6 had with those the offered load needed:
// by Little's law, the iterations offered per second (run and dropped) times
// how long one took is how many VUs were busy at once had none been
// missing.
type VUShortfall struct {
	VUsMax       float64 `json:"vus_max"`      // k6's vus_max: the most VUs it ran
	OfferedRate  float64 `json:"offered_rate"` // iterations/s offered: run and dropped, over the run
	IterationSec float64 `json:"iteration_s"`  // the mean iteration's duration
	NeededVUs    float64 `json:"needed_vus"`   // OfferedRate × IterationSec
}

// NewVUShortfall is the shortfall of a run of seconds that ran iterations
// and dropped dropped, with vusMax VUs at most and a mean iteration of
// iterSec: nil when a figure is missing.
func NewVUShortfall(vusMax, iterations, dropped, seconds, iterSec float64) *VUShortfall {
	if vusMax <= 0 || seconds <= 0 || iterSec <= 0 || dropped <= 0 {
		return nil
	}
	rate := (iterations + dropped) / seconds
	return &VUShortfall{VUsMax: vusMax, OfferedRate: rate, IterationSec: iterSec, NeededVUs: math.Ceil(rate * iterSec)}
}

// ScheduleStats is one schedule's account.
type ScheduleStats struct {
	Name     string  `json:"name"`
	Kind     string  `json:"kind"`
	Claimed  uint64  `json:"claimed"`
	Late     uint64  `json:"late"`    // claimed more than 1 ms after they were due
	Dropped  uint64  `json:"dropped"` // due before the test stopped, never sent
	MaxLagMS float64 `json:"max_lag_ms"`
	// Trace is a trace replay's summary (format, rows, mean rate, predicted
	// prefix reuse), "" for synthetic schedules.
	Trace string `json:"trace,omitempty"`
	// PrefixReuse is the share of prompt tokens the trace's hash ids predict
	// an infinite cache reuses (nil without prefix identity).
	PrefixReuse *float64 `json:"prefix_reuse,omitempty"`
}

// Dropped is every send the test owed and never made: schedule credits and
// k6's dropped iterations.
func (d *Dispatch) Dropped() (credits uint64, iterations float64) {
	if d == nil {
		return 0, 0
	}
	for _, s := range d.Schedules {
		credits += s.Dropped
	}
	if d.K6Dropped != nil {
		iterations = *d.K6Dropped
	}
	return credits, iterations
}
