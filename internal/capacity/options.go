package capacity

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Capacity.search's options as the script gives them, and the search's
// configuration made from them. The binding decodes the JS object into
// Options (by the opt tags) and names the clients the objectives are for;
// the rest is decided here, so every refusal is tested without a
// JavaScript runtime.

// Range is the range of levels searched: req/s (rate) or calls in flight
// (concurrency).
type Range struct {
	Min float64 `opt:"min"`
	Max float64 `opt:"max"`
}

// Options are Capacity.search's options. Client, each of Clients' client and
// Trace hold the script's own objects (a Client, a Schedule.trace), which
// only the binding reads.
type Options struct {
	SLO         map[string]string `opt:"slo"`
	Rate        *Range            `opt:"rate"`
	Concurrency *Range            `opt:"concurrency"`
	// Window, Precision, Share and MaxWindows take their default when
	// absent; given, they must be above 0 (the decoder refuses a 0: a window,
	// bracket, share or budget of nothing is a mistake, not the default).
	// Warmup given as 0 is no warm-up (every call of a window counts); nil
	// is the default, a fifth of the window.
	Window time.Duration  `opt:"window,positive" want:"a duration above 0 like '20s'"`
	Warmup *time.Duration `opt:"warmup"`
	// MaxWindow and Sustain take their default when absent (see Config).
	MaxWindow  time.Duration `opt:"maxWindow,positive" want:"a duration above 0 like '80s'"`
	Sustain    time.Duration `opt:"sustain,positive" want:"a duration above 0 like '60s'"`
	Precision  float64       `opt:"precision,positive" want:"a number in (0, 1) such as 0.05 (within 5%)"`
	Share      float64       `opt:"share,positive" want:"a number in (0, 1] such as 0.8 (plan at 80% of the capacity)"`
	MaxWindows int           `opt:"maxWindows,positive" want:"a whole number of windows, at least 3"`
	Arrivals   string        `opt:"arrivals"` // "poisson" (default), "constant" or "bursty"
	CV         float64       `opt:"cv,positive" want:"a number above 0 such as 2 (bursty gaps' coefficient of variation)"`
	Seed       *uint64       `opt:"seed"`           // nil: 0; given, even as 0, it is the synthetic arrivals' and excludes a trace
	Trace      any           `opt:"trace" json:"-"` // a Schedule.trace: its arrivals, scaled to the level
	Client     any           `opt:"client" json:"-"`
	Clients    []any         `opt:"clients" json:"-"`
}

// DefaultWindow is a window's length when the options give none.
const DefaultWindow = 20 * time.Second

// ClientLabel names the client an option holds, the label its calls'
// records carry: "" for none, an error naming where for a value that is not
// a client.
type ClientLabel func(v any, where string) (string, error)

// ConfigOf is the search's configuration from the script's options. It
// checks how the options go together; New checks each value.
func ConfigOf(o Options, label ClientLabel) (Config, error) {
	cfg := Config{Window: o.Window, MaxWindow: o.MaxWindow, Sustain: o.Sustain, Precision: o.Precision, Share: o.Share,
		MaxWindows: o.MaxWindows}
	if cfg.Window == 0 {
		cfg.Window = DefaultWindow
	}
	if o.Warmup != nil {
		cfg.Warmup, cfg.warmupGiven = *o.Warmup, true
	}
	switch {
	case o.Rate != nil && o.Concurrency != nil:
		return cfg, errors.New("give rate (open model) or concurrency (closed model), not both")
	case o.Rate != nil:
		cfg.Model, cfg.Min, cfg.Max = ModelRate, o.Rate.Min, o.Rate.Max
	case o.Concurrency != nil:
		cfg.Model, cfg.Min, cfg.Max = ModelConcurrency, o.Concurrency.Min, o.Concurrency.Max
	}
	if err := arrivalsOf(o, &cfg); err != nil {
		return cfg, err
	}
	objs, err := objectivesOf(o, label)
	if err != nil {
		return cfg, err
	}
	cfg.Objectives = objs
	return cfg, nil
}

// Arrival processes of the open model.
const (
	ArrivalsPoisson  = "poisson"
	ArrivalsConstant = "constant"
	ArrivalsBursty   = "bursty"
	// DefaultBurstCV is bursty arrivals' coefficient of variation when cv is
	// not given, as Arrivals.bursty's.
	DefaultBurstCV = 3
	// maxCV keeps gamma gaps' shape where samples do not underflow.
	maxCV = 30
)

// arrivalsOf reads arrivals and cv into the configuration.
func arrivalsOf(o Options, cfg *Config) error {
	switch o.Arrivals {
	case "", ArrivalsPoisson, ArrivalsConstant, ArrivalsBursty:
	default:
		return fmt.Errorf("arrivals must be 'poisson', 'constant' or 'bursty', got %q", o.Arrivals)
	}
	if o.Arrivals != "" && cfg.Model != ModelRate {
		return errors.New("arrivals is for the open model (rate: {min, max})")
	}
	if o.Trace != nil && (o.Arrivals != "" || o.Seed != nil || o.CV != 0) {
		return errors.New("give trace or arrivals/seed/cv, not both: the trace's rows are the arrivals")
	}
	if o.CV != 0 && o.Arrivals != ArrivalsBursty {
		return errors.New("cv is for arrivals: 'bursty' (Poisson's is 1, constant's 0)")
	}
	if o.CV > maxCV {
		return fmt.Errorf("cv must be in (0, %d], got %v", maxCV, o.CV)
	}
	if cfg.Model != ModelRate || o.Trace != nil {
		return nil
	}
	cfg.Arrivals, cfg.CV = o.Arrivals, o.CV
	switch cfg.Arrivals {
	case "":
		cfg.Arrivals, cfg.CV = ArrivalsPoisson, 1
	case ArrivalsPoisson:
		cfg.CV = 1
	case ArrivalsBursty:
		if cfg.CV == 0 {
			cfg.CV = DefaultBurstCV
		}
	}
	return nil
}

// objectivesOf reads slo (with client: the calls of that client only) and
// clients: [{client, slo}], objectives per client.
func objectivesOf(o Options, label ClientLabel) ([]Objective, error) {
	var objs []Objective
	if o.SLO != nil {
		name, err := label(o.Client, "client")
		if err != nil {
			return nil, err
		}
		if objs, err = ParseObjectives("slo", name, o.SLO); err != nil {
			return nil, err
		}
	} else if o.Client != nil {
		return nil, errors.New("client goes with slo: the objectives its calls are judged by")
	}
	for i, c := range o.Clients {
		more, err := clientObjectives("clients["+strconv.Itoa(i)+"]", c, label)
		if err != nil {
			return nil, err
		}
		objs = append(objs, more...)
	}
	return objs, nil
}

// clientObjectives reads one {client, slo} of clients (where names it).
func clientObjectives(where string, c any, label ClientLabel) ([]Objective, error) {
	m, ok := c.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s must be an object {client, slo}", where)
	}
	name, err := label(m["client"], where+".client")
	if err != nil {
		return nil, err
	}
	if name == "" {
		return nil, fmt.Errorf("%s.client is required (a Client)", where)
	}
	slo := map[string]string{}
	raw, _ := m["slo"].(map[string]any)
	for k, v := range raw {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%s.slo.%s must be a string such as 'p95<2s'", where, k)
		}
		slo[k] = s
	}
	return ParseObjectives(where+".slo", name, slo)
}

// ArrivalSeed is the synthetic arrivals' seed: the one given, else 0.
func (o Options) ArrivalSeed() uint64 {
	if o.Seed == nil {
		return 0
	}
	return *o.Seed
}
