package capacity

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/quantile"
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
	Model    string // ModelRate or ModelConcurrency
	Min, Max float64
	Window   time.Duration
	Warmup   time.Duration // 0: a fifth of the window, unless warmupGiven
	// MaxWindow is the longest a window is lengthened to while its calls
	// cannot decide (0: four windows, or, for the open model, long enough to
	// measure at Min half again the calls a pass needs, if that is longer,
	// both times Burstiness; and a window whose calls come slower than that,
	// as the closed model's may, goes on until it has measured them, up to
	// maxCallsTimes windows).
	MaxWindow time.Duration
	// Sustain is the length of the window that confirms the answer before
	// it is given (0: three windows, at least a minute).
	Sustain    time.Duration
	Precision  float64 // the bracket's width relative to its low end when refining stops; 0: 0.05
	Share      float64 // of the capacity, for the recommended level; 0: 0.8
	MaxWindows int     // the search's budget; 0: 16
	Objectives []Objective
	// warmupGiven says Warmup is the script's own, 0 included (no warm-up):
	// ConfigOf knows whether the option was there, and only a 0 it did not
	// give is the default.
	warmupGiven bool
	// callsBound says MaxWindow is the default, so a window whose calls
	// come too slowly to decide in it may go on until it measured half
	// again the calls a pass needs (see Search.longest).
	callsBound bool
	// Arrivals is the open model's synthetic arrival process (ArrivalsPoisson,
	// ArrivalsConstant or ArrivalsBursty; "" with a trace or the closed
	// model) and CV its gaps' coefficient of variation (1, 0, or bursty's).
	Arrivals string
	CV       float64
	// Trace is the trace the open model's arrivals replay (nil: synthetic
	// arrivals): the binding runs it at level / Trace.MeanRate times its
	// recorded speed, and the answer reads as that multiplier too.
	Trace *runrecord.CapacityTrace
}

// Defaults.
const (
	defaultPrecision  = 0.05
	defaultShare      = 0.8
	defaultMaxWindows = 16
	// defaultMaxWindowTimes and defaultSustainTimes are MaxWindow and Sustain
	// in windows when the options give none.
	defaultMaxWindowTimes = 4
	defaultSustainTimes   = 3
	// minDefaultSustain is the shortest default sustain window: near its
	// capacity a queue fed by random arrivals swings over tens of seconds
	// (a burst, then the backlog it leaves), and a sustain window shorter
	// than a few such swings can catch a calm stretch and pass a level that
	// does not hold.
	minDefaultSustain = time.Minute
	// maxCallsTimes bounds, in maxWindows, how long a default-length window
	// whose calls come slowly may go on to measure the calls a pass needs.
	maxCallsTimes = 4
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
// limit must be able to start and end inside the measured span); and
// a longest window (maxWindow) in which the open model's first level could
// not measure the calls a pass needs.
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
	if c.Sustain == 0 {
		c.Sustain = max(defaultSustainTimes*c.Window, minDefaultSustain)
	}
	if c.Sustain < c.Window {
		return c, fmt.Errorf("sustain must be at least the window (%v), got %v", c.Window, c.Sustain)
	}
	return c.checkMaxWindow()
}

// checkMaxWindow fills or checks the longest window. A window passes an
// objective only from enough calls (59 for a p95, 299 for a p99 or an error
// rate under 1 %, at 95 %), so at the open model's first level, where calls
// come slowest, the longest window must be able to measure them; by
// default it is made long enough for half again as many.
func (c Config) checkMaxWindow() (Config, error) {
	needed, which := PassCalls(c.Objectives)
	need := func(extra float64) time.Duration {
		return c.Warmup + time.Duration(extra*float64(needed)/c.Min*float64(time.Second))
	}
	if c.MaxWindow == 0 {
		b := c.Burstiness()
		c.MaxWindow, c.callsBound = c.windowsMaxWindow(), true
		if c.Model == ModelRate {
			c.MaxWindow = max(c.MaxWindow, need(1.5*b).Round(time.Second))
		}
		return c, nil
	}
	if c.MaxWindow < c.Window {
		return c, fmt.Errorf("maxWindow must be at least the window (%v), got %v", c.Window, c.MaxWindow)
	}
	if c.Model == ModelRate && c.MaxWindow < need(1) {
		return c, fmt.Errorf("maxWindow %v is too short for the calls: a window passes %s only from %d calls, and at "+
			"rate.min %v req/s even a window of %v measures fewer; lengthen maxWindow (to %v or more) or raise rate.min",
			c.MaxWindow, which, needed, c.Min, c.MaxWindow, need(1.5).Round(time.Second))
	}
	return c, nil
}

// windowsMaxWindow is the default longest window counted in windows:
// defaultMaxWindowTimes windows, times the arrivals' Burstiness.
func (c Config) windowsMaxWindow() time.Duration {
	return time.Duration(c.Burstiness() * defaultMaxWindowTimes * float64(c.Window)).Round(time.Second)
}

// Burstiness is how many times more calls than under Poisson arrivals a
// window needs to decide as surely: cv² for bursty arrivals (cv above 1),
// else 1. Two reasons, both from queueing: over a window of n arrivals a
// renewal process's count varies cv² times a Poisson count's (its index of
// dispersion), so the load a window carried is known that much less well;
// and a G/D/c queue's waits scale with (ca² + cs²)/2 (Kingman), so its
// queue relaxes that many times more slowly and the calls a burst delays
// come in runs that much longer, each run one event to the bounds (their
// effective sample shrinks by its mean length). Constant arrivals keep
// Poisson's default: their windows decide sooner, but a window only runs
// as long as its calls need.
func (c Config) Burstiness() float64 {
	if c.Model != ModelRate || c.Trace != nil || c.CV <= 1 {
		return 1
	}
	return c.CV * c.CV
}

// PassCalls is the fewest calls from which a window can pass every
// objective at Confidence, and the objective that needs the most: a
// percentile p needs n with p^n ≤ 1 − Confidence (all n within the limit),
// an error rate under a share e needs n with (1 − e)^n ≤ 1 − Confidence (no
// failure among them).
func PassCalls(objs []Objective) (int, string) {
	most, which := 1, ""
	for _, o := range objs {
		p := o.Quantile
		if o.Figure == FigureErrors {
			if o.Limit == 0 {
				continue
			}
			p = 1 - o.Limit
		}
		if n := quantile.MinCallsUpper(p, Confidence); n > most {
			most, which = n, o.Text
		}
	}
	return most, which
}

// MaxDuration is the longest the search can take: every window of the
// budget at its longest, with its tail and a drain. A scenario running the
// search lasts this long. With the default maxWindow a window may go on
// past it while its calls call for it, up to maxCallsTimes of it
// (Search.longest).
func (c Config) MaxDuration() time.Duration {
	longest := max(c.MaxWindow, c.Sustain+c.Sustain/2)
	if c.callsBound {
		longest *= maxCallsTimes
	}
	return time.Duration(c.MaxWindows) * (longest + c.Window)
}
