package sim

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"
)

// FaultHeader carries per-request faults: a comma-separated list of
// name, name=value, name@k or name=value@k (k: after that many output tokens).
const FaultHeader = "X-Sim-Fault"

// Faults is what goes wrong with one request. The zero value is a healthy one.
type Faults struct {
	Stalls       []Stall       // pauses of the sequence after some tokens, by After
	TTFT         time.Duration // extra delay before the first token
	Disconnect   int           // close the connection after this many tokens; -1 = never
	Error        int           // OpenAI error data event after this many tokens; -1 = never
	Malformed    int           // invalid JSON data line after this many tokens; -1 = never
	Status       int           // answer this HTTP status before streaming; 0 = no
	HeadersDelay time.Duration // wait before the response headers
	HTML         bool          // 200 with a text/html body
	Gateway      time.Duration // buffer output and flush every Gateway; 0 = no
	specs        []string
}

// Stall pauses a sequence for Dur after After tokens.
type Stall struct {
	After int
	Dur   time.Duration
}

func noFaults() Faults { return Faults{Disconnect: -1, Error: -1, Malformed: -1} }

// Any reports whether some fault is set.
func (f *Faults) Any() bool { return len(f.specs) > 0 }

// String is the normalized list, as it goes in the trace.
func (f *Faults) String() string { return strings.Join(f.specs, ",") }

// ParseFaults reads the X-Sim-Fault syntax. "none" (or "") is no fault.
func ParseFaults(s string) (Faults, error) {
	f := noFaults()
	for _, item := range strings.Split(s, ",") {
		if err := f.add(strings.TrimSpace(item)); err != nil {
			return noFaults(), err
		}
	}
	return f, nil
}

// faultNames documents the syntax in errors.
const faultNames = "stall=MS@K, ttft=MS, disconnect@K, error@K, malformed@K, status=CODE, headers_delay=MS, html, gateway=MS, none"

func (f *Faults) add(item string) error {
	if item == "" || item == "none" {
		return nil
	}
	name, rest, hasValue := strings.Cut(item, "=")
	value, after := rest, ""
	if hasValue {
		value, after, _ = strings.Cut(rest, "@")
	} else {
		name, after, _ = strings.Cut(item, "@")
	}
	name = strings.TrimSpace(name)
	k := -1
	if after != "" {
		n, err := strconv.Atoi(strings.TrimSpace(after))
		if err != nil || n < 0 {
			return fmt.Errorf("fault %q: @k must be a token count >= 0", item)
		}
		k = n
	}
	ms := func() (time.Duration, error) {
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if !hasValue || err != nil || v < 0 || v > 3.6e6 {
			return 0, fmt.Errorf("fault %q: %s needs a duration in ms (0..3600000)", item, name)
		}
		return time.Duration(v * float64(time.Millisecond)), nil
	}
	noValue := func() error {
		if hasValue {
			return fmt.Errorf("fault %q: %s takes no value", item, name)
		}
		return nil
	}
	noAfter := func() error {
		if k >= 0 {
			return fmt.Errorf("fault %q: %s takes no @k", item, name)
		}
		return nil
	}
	at := func(def int) int {
		if k < 0 {
			return def
		}
		return k
	}
	var err error
	switch name {
	case "stall":
		var d time.Duration
		if d, err = ms(); err == nil {
			f.Stalls = append(f.Stalls, Stall{After: at(1), Dur: d})
			sort.SliceStable(f.Stalls, func(i, j int) bool { return f.Stalls[i].After < f.Stalls[j].After })
		}
	case "ttft":
		if err = noAfter(); err == nil {
			var d time.Duration
			if d, err = ms(); err == nil {
				f.TTFT += d
			}
		}
	case "disconnect", "error", "malformed":
		if err = noValue(); err == nil {
			switch name {
			case "disconnect":
				f.Disconnect = at(0)
			case "error":
				f.Error = at(0)
			default:
				f.Malformed = at(0)
			}
		}
	case "status":
		if err = noAfter(); err == nil {
			code, cerr := strconv.Atoi(strings.TrimSpace(value))
			if !hasValue || cerr != nil || code < 400 || code > 599 {
				err = fmt.Errorf("fault %q: status needs an HTTP code 400..599", item)
			} else {
				f.Status = code
			}
		}
	case "headers_delay", "gateway":
		if err = noAfter(); err == nil {
			var d time.Duration
			if d, err = ms(); err == nil {
				if name == "gateway" {
					f.Gateway = d
				} else {
					f.HeadersDelay += d
				}
			}
		}
	case "html":
		if err = noValue(); err == nil {
			err = noAfter()
		}
		f.HTML = err == nil
	default:
		err = fmt.Errorf("unknown fault %q (known: %s)", name, faultNames)
	}
	if err != nil {
		return err
	}
	f.specs = append(f.specs, item)
	return nil
}

// merge adds g's faults to f.
func (f *Faults) merge(g Faults) {
	for _, s := range g.specs {
		_ = f.add(s) // g's specs parsed already
	}
}

// endAt is the token count after which the sequence ends early, and why.
func (f *Faults) endAt() (int, Outcome) {
	switch {
	case f.Disconnect >= 0 && (f.Error < 0 || f.Disconnect <= f.Error):
		return f.Disconnect, OutcomeDisconnect
	case f.Error >= 0:
		return f.Error, OutcomeError
	}
	return -1, OutcomeOK
}

// faultDraw draws a model's configured faults for one request.
type faultDraw struct {
	specs  []string // sorted, so draws are reproducible
	probs  []float64
	parsed []Faults
}

func newFaultDraw(m map[string]float64) (*faultDraw, error) {
	d := &faultDraw{}
	for s := range m {
		d.specs = append(d.specs, s)
	}
	sort.Strings(d.specs)
	for _, s := range d.specs {
		f, err := ParseFaults(s)
		if err != nil {
			return nil, err
		}
		d.probs = append(d.probs, m[s])
		d.parsed = append(d.parsed, f)
	}
	return d, nil
}

// draw returns the faults that hit this request; rng is the caller's, locked.
func (d *faultDraw) draw(rng *rand.Rand) Faults {
	f := noFaults()
	for i := range d.specs {
		if d.probs[i] > 0 && rng.Float64() < d.probs[i] {
			f.merge(d.parsed[i])
		}
	}
	return f
}
