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
	it, err := parseFaultItem(item)
	if err != nil {
		return err
	}
	if err := f.apply(it); err != nil {
		return err
	}
	f.specs = append(f.specs, item)
	return nil
}

// faultItem is one item of the fault list taken apart: name, name=value,
// name@k or name=value@k.
type faultItem struct {
	item, name, value string
	hasValue          bool
	k                 int // the token count after @; -1 without one
}

func parseFaultItem(item string) (faultItem, error) {
	name, rest, hasValue := strings.Cut(item, "=")
	value, after := rest, ""
	if hasValue {
		value, after, _ = strings.Cut(rest, "@")
	} else {
		name, after, _ = strings.Cut(item, "@")
	}
	it := faultItem{item: item, name: strings.TrimSpace(name), value: value, hasValue: hasValue, k: -1}
	if after != "" {
		n, err := strconv.Atoi(strings.TrimSpace(after))
		if err != nil || n < 0 {
			return it, fmt.Errorf("fault %q: @k must be a token count >= 0", item)
		}
		it.k = n
	}
	return it, nil
}

// ms is the item's value as a duration in milliseconds, up to an hour.
func (it faultItem) ms() (time.Duration, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(it.value), 64)
	if !it.hasValue || err != nil || v < 0 || v > 3.6e6 {
		return 0, fmt.Errorf("fault %q: %s needs a duration in ms (0..3600000)", it.item, it.name)
	}
	return time.Duration(v * float64(time.Millisecond)), nil
}

func (it faultItem) noValue() error {
	if it.hasValue {
		return fmt.Errorf("fault %q: %s takes no value", it.item, it.name)
	}
	return nil
}

func (it faultItem) noAfter() error {
	if it.k >= 0 {
		return fmt.Errorf("fault %q: %s takes no @k", it.item, it.name)
	}
	return nil
}

// at is the item's token count, def without one.
func (it faultItem) at(def int) int {
	if it.k < 0 {
		return def
	}
	return it.k
}

// apply sets the fault an item names, or says what is wrong with it.
func (f *Faults) apply(it faultItem) error {
	switch it.name {
	case "stall":
		d, err := it.ms()
		if err != nil {
			return err
		}
		f.Stalls = append(f.Stalls, Stall{After: it.at(1), Dur: d})
		sort.SliceStable(f.Stalls, func(i, j int) bool { return f.Stalls[i].After < f.Stalls[j].After })
	case "disconnect", "error", "malformed":
		if err := it.noValue(); err != nil {
			return err
		}
		switch it.name {
		case "disconnect":
			f.Disconnect = it.at(0)
		case "error":
			f.Error = it.at(0)
		default:
			f.Malformed = it.at(0)
		}
	case "status":
		if err := it.noAfter(); err != nil {
			return err
		}
		code, err := strconv.Atoi(strings.TrimSpace(it.value))
		if !it.hasValue || err != nil || code < 400 || code > 599 {
			return fmt.Errorf("fault %q: status needs an HTTP code 400..599", it.item)
		}
		f.Status = code
	case "ttft", "headers_delay", "gateway":
		return f.applyDelay(it)
	case "html":
		err := it.noValue()
		if err == nil {
			err = it.noAfter()
		}
		f.HTML = err == nil
		return err
	default:
		return fmt.Errorf("unknown fault %q (known: %s)", it.name, faultNames)
	}
	return nil
}

// applyDelay sets a fault that delays the answer, at no token count: the
// first token's and the headers' delays add up, the gateway's interval is
// the last one given.
func (f *Faults) applyDelay(it faultItem) error {
	if err := it.noAfter(); err != nil {
		return err
	}
	d, err := it.ms()
	if err != nil {
		return err
	}
	switch it.name {
	case "ttft":
		f.TTFT += d
	case "gateway":
		f.Gateway = d
	default:
		f.HeadersDelay += d
	}
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
