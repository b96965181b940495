package capacity

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// Metric is the k6 metric (a Gauge) the binding pushes the answer to.
const Metric = "llm_capacity"

// Models of load.
const (
	ModelRate        = "rate"        // open: arrivals per second
	ModelConcurrency = "concurrency" // closed: calls in flight
)

// Config is a search: what it varies, over which range, and what must hold.
type Config struct {
	Model      string // ModelRate or ModelConcurrency
	Min, Max   float64
	Window     time.Duration
	Warmup     time.Duration // 0: a fifth of the window, unless warmupGiven
	Precision  float64       // the bracket's width relative to its low end when refining stops; 0: 0.05
	Share      float64       // of the capacity, for the recommended level; 0: 0.8
	MaxWindows int           // the search's budget; 0: 12
	Objectives []Objective
	// warmupGiven says Warmup is the script's own, 0 included (no warm-up):
	// ConfigOf knows whether the option was there, and only a 0 it did not
	// give is the default.
	warmupGiven bool
	// Trace is the trace the open model's arrivals replay (nil: synthetic
	// arrivals): the binding runs it at level / Trace.MeanRate times its
	// recorded speed, and the answer reads as that multiplier too.
	Trace *runrecord.CapacityTrace
}

// Defaults.
const (
	defaultPrecision  = 0.05
	defaultShare      = 0.8
	defaultMaxWindows = 12
	// minWindow is the shortest window: its measured span must see enough
	// calls, and the slope tests enough seconds.
	minWindow = 3 * time.Second
)

// withDefaults fills the zero fields and checks the rest; errors name the
// option as a script writes it.
func (c Config) withDefaults() (Config, error) {
	if c.Model != ModelRate && c.Model != ModelConcurrency {
		return c, errors.New("give rate: {min, max} (open model, req/s) or concurrency: {min, max} (closed model)")
	}
	if err := c.checkRange(); err != nil {
		return c, err
	}
	if c.Precision == 0 {
		c.Precision = defaultPrecision
	}
	if !(c.Precision > 0 && c.Precision < 1) {
		return c, fmt.Errorf("precision must be in (0, 1) (0.05: within 5%%), got %v", c.Precision)
	}
	if c.Share == 0 {
		c.Share = defaultShare
	}
	if !(c.Share > 0 && c.Share <= 1) {
		return c, fmt.Errorf("share must be in (0, 1] (0.8: plan at 80%% of the capacity), got %v", c.Share)
	}
	if c.MaxWindows == 0 {
		c.MaxWindows = defaultMaxWindows
	}
	if c.MaxWindows < 3 {
		return c, fmt.Errorf("maxWindows must be at least 3, got %d", c.MaxWindows)
	}
	if c.Trace != nil && c.Model != ModelRate {
		return c, errors.New("trace is for the open model (rate: {min, max}): its arrivals are what it replays")
	}
	if c.Trace != nil && !(c.Trace.MeanRate > 0) {
		return c, fmt.Errorf("trace %s has no mean rate to scale (it needs two rows at different times)", c.Trace.Name)
	}
	if len(c.Objectives) == 0 {
		return c, errors.New("slo: no objective (give e.g. {ttft: 'p95<2s', errors: '<1%'})")
	}
	return c.checkWindow()
}

func (c Config) checkRange() error {
	name := c.Model
	if !(c.Min > 0) || math.IsInf(c.Max, 0) || math.IsNaN(c.Max) {
		return fmt.Errorf("%s: min must be a positive number and max a finite one, got {min: %v, max: %v}", name, c.Min, c.Max)
	}
	if c.Max <= c.Min {
		return fmt.Errorf("%s: the range is empty or inverted: {min: %v, max: %v} (max must be above min)", name, c.Min, c.Max)
	}
	if c.Model == ModelConcurrency && (c.Min != math.Trunc(c.Min) || c.Max != math.Trunc(c.Max)) {
		return fmt.Errorf("concurrency: min and max are whole numbers of calls in flight, got {min: %v, max: %v}", c.Min, c.Max)
	}
	return nil
}

// checkWindow refuses a window too short for the calls it judges: shorter
// than minWindow, or than twice the longest duration limit (a call at the
// limit must be able to start and end inside the measured span).
func (c Config) checkWindow() (Config, error) {
	if c.Window < minWindow {
		return c, fmt.Errorf("window must be at least %v, got %v", minWindow, c.Window)
	}
	if c.Warmup == 0 && !c.warmupGiven {
		c.Warmup = c.Window / 5
	}
	if c.Warmup < 0 || c.Warmup > c.Window/2 {
		return c, fmt.Errorf("warmup must be between 0 and half the window (%v), got %v", c.Window/2, c.Warmup)
	}
	if long := LongestLimit(c.Objectives); 2*long > c.Window-c.Warmup {
		return c, fmt.Errorf("window %v is too short for the calls: its measured part (%v after the warm-up) must be at "+
			"least twice the longest limit (%v); lengthen the window", c.Window, c.Window-c.Warmup, long)
	}
	if measured := (c.Window - c.Warmup).Seconds() * 1.5; c.Model == ModelRate && measured*c.Min < minCalls {
		return c, fmt.Errorf("window %v is too short for the calls: at rate.min %v req/s it measures fewer than %d calls "+
			"even lengthened; lengthen the window or raise rate.min", c.Window, c.Min, minCalls)
	}
	return c, nil
}

// MaxDuration is the longest the search can take: every window of the
// budget lengthened once. A scenario running the search lasts this long.
func (c Config) MaxDuration() time.Duration {
	return time.Duration(c.MaxWindows) * (c.Window + c.Window/2)
}
