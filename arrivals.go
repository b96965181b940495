package llmstream

import (
	"errors"
	"fmt"
	"time"

	"github.com/grafana/sobek"

	"github.com/llmstream/xk6-llmstream/internal/dataset"
)

// Arrivals: the JS surface of internal/dataset's arrival processes (Poisson and
// bursty inter-arrival times), kept once per process in the shared store.

type arrivalOptions struct {
	dataset.ArrivalOptions
	Name string `opt:"name"` // two processes with equal options but different names stay apart
}

func (mi *ModuleInstance) poissonArrivals(opts sobek.Value) (*jsArrivals, error) {
	var o arrivalOptions
	if err := decodeOptions(opts, "Arrivals.poisson options", &o); err != nil {
		return nil, err
	}
	if o.CV != 0 && o.CV != 1 {
		return nil, errors.New("Arrivals.poisson: cv is always 1; use Arrivals.bursty for other values")
	}
	return mi.arrivals("poisson", o)
}

// defaultBurstCV makes Arrivals.bursty clearly bursty when cv is not given:
// counts per window vary about nine times more than Poisson.
const defaultBurstCV = 3

func (mi *ModuleInstance) burstyArrivals(opts sobek.Value) (*jsArrivals, error) {
	var o arrivalOptions
	if err := decodeOptions(opts, "Arrivals.bursty options", &o); err != nil {
		return nil, err
	}
	if o.CV == 0 {
		o.CV = defaultBurstCV
	}
	return mi.arrivals("bursty", o)
}

func (mi *ModuleInstance) arrivals(kind string, o arrivalOptions) (*jsArrivals, error) {
	a, err := dataset.Shared(mi.root.shared.datasets, storeKey("arrivals", o), func() (*dataset.Arrivals, error) {
		return dataset.NewArrivals(o.ArrivalOptions)
	})
	if err != nil {
		return nil, fmt.Errorf("Arrivals.%s: %w", kind, err)
	}
	return &jsArrivals{a: a}, nil
}

// jsArrivals: next() claims the process's next arrival and returns the
// seconds to sleep() before sending it; offsets(seconds) lists the schedule;
// stats() says whether the VUs kept up.
type jsArrivals struct{ a *dataset.Arrivals }

// Next claims the next arrival; the result is in seconds, for k6's sleep().
func (j *jsArrivals) Next() float64 { return j.a.Next().Seconds() }

// Offsets lists the arrival times (seconds from the start) within duration.
func (j *jsArrivals) Offsets(duration float64) ([]float64, error) { return j.a.Offsets(duration) }

// Stats reports claimed and late arrivals.
func (j *jsArrivals) Stats() map[string]any {
	s := j.a.Stats()
	return map[string]any{"claimed": s.Claimed, "late": s.Late, "maxLagMs": s.MaxLag * float64(time.Second/time.Millisecond),
		"rate": s.Rate, "cv": s.CV}
}
