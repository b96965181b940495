package load

import (
	"errors"
	"fmt"
	"time"

	"github.com/grafana/sobek"

	"github.com/llmstream/xk6-llmstream/binding/k6env"
	"github.com/llmstream/xk6-llmstream/internal/dataset"
)

// Arrivals: the JS surface of internal/dataset's arrival processes (Poisson and
// bursty inter-arrival times), kept once per process in the shared store.

// arrivalsFactory is one VU's Arrivals namespace: processes are kept once per
// process in the store.
type ArrivalsFactory struct {
	Store *dataset.Store
	Scope k6env.VUScope
}

type arrivalOptions struct {
	dataset.ArrivalOptions
	Name string `opt:"name"` // two processes with equal options but different names stay apart
}

func (ar ArrivalsFactory) Poisson(opts sobek.Value) (*jsArrivals, error) {
	var o arrivalOptions
	if err := k6env.DecodeOptions(opts, "Arrivals.poisson options", &o); err != nil {
		return nil, err
	}
	if o.CV != 0 && o.CV != 1 {
		return nil, errors.New("Arrivals.poisson: cv is always 1; use Arrivals.bursty for other values")
	}
	return ar.build("poisson", o)
}

// defaultBurstCV makes Arrivals.bursty clearly bursty when cv is not given:
// counts per window vary about nine times more than Poisson.
const defaultBurstCV = 3

func (ar ArrivalsFactory) Bursty(opts sobek.Value) (*jsArrivals, error) {
	var o arrivalOptions
	if err := k6env.DecodeOptions(opts, "Arrivals.bursty options", &o); err != nil {
		return nil, err
	}
	if o.CV == 0 {
		o.CV = defaultBurstCV
	}
	return ar.build("bursty", o)
}

func (ar ArrivalsFactory) build(kind string, o arrivalOptions) (*jsArrivals, error) {
	a, err := dataset.Shared(ar.Store, k6env.StoreKey("arrivals", o), func() (*dataset.Arrivals, error) {
		return dataset.NewArrivals(o.ArrivalOptions)
	})
	if err != nil {
		return nil, fmt.Errorf("Arrivals.%s: %w", kind, err)
	}
	return &jsArrivals{a: a, scope: ar.Scope}, nil
}

// jsArrivals: next() claims the process's next arrival and returns the
// seconds to sleep() before sending it; offsets(seconds) lists the schedule;
// stats() says whether the VUs kept up.
//
// When the test is split across k6 instances, each instance runs its share
// of the one process of the whole test (known from the first call in a VU;
// in the init context, offsets() lists the whole test's schedule).
type jsArrivals struct {
	a     *dataset.Arrivals
	scope k6env.VUScope
	part  *dataset.Arrivals // nil until the execution segment is known
}

func (j *jsArrivals) process() (*dataset.Arrivals, error) {
	return k6env.InstancePart(j.scope, &j.part, func() *dataset.Arrivals { return j.a }, j.a.Part)
}

// Next claims the next arrival; the result is in seconds, for k6's sleep().
func (j *jsArrivals) Next() (float64, error) {
	a, err := j.process()
	if err != nil {
		return 0, fmt.Errorf("arrivals next(): %w", err)
	}
	return a.Next().Seconds(), nil
}

// Offsets lists the arrival times (seconds from the start) within duration.
func (j *jsArrivals) Offsets(duration float64) ([]float64, error) {
	a, err := j.process()
	if err != nil {
		return nil, fmt.Errorf("arrivals offsets(): %w", err)
	}
	return a.Offsets(duration)
}

// Stats reports claimed and late arrivals, and the share of the process this
// instance runs.
func (j *jsArrivals) Stats() map[string]any {
	a, err := j.process()
	if err != nil {
		a = j.a
	}
	s := a.Stats()
	return map[string]any{"claimed": s.Claimed, "late": s.Late, "maxLagMs": s.MaxLag * float64(time.Second/time.Millisecond),
		"rate": s.Rate, "cv": s.CV, "segment": s.Segment, "share": s.Share}
}
