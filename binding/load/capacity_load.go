package load

// One capacity search of the process and the load it drives: the open
// model's schedule (Poisson or constant arrivals, or a trace's, replayed at
// level / its mean rate) or the closed model's gate, started on the test's
// clock once per process and advanced every tick and at every VU's turn.
// capacity.go is its JS surface.

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"go.k6.io/k6/js/modules"
	"go.k6.io/k6/lib"
	"go.k6.io/k6/metrics"

	"github.com/llmstream/xk6-llmstream/binding/k6env"
	"github.com/llmstream/xk6-llmstream/internal/capacity"
	"github.com/llmstream/xk6-llmstream/internal/dataset"
	"github.com/llmstream/xk6-llmstream/internal/schedule"
)

// sharedSearch is one search of the process and the load it drives.
type sharedSearch struct {
	search *capacity.Search
	cfg    capacity.Config
	gauge  *metrics.Metric
	whole  *schedule.Schedule // the open model's credits
	trace  *sharedSchedule    // the trace the credits replay (nil: synthetic arrivals)
	gate   *capacity.Gate     // the closed model's slots

	startOnce sync.Once
	startErr  error
	sched     *schedule.Schedule // this instance's part of whole
	share     dataset.Share
	done      context.Context //nolint:containedctx // ends when the answer is known, to wake the waiting VUs
	finish    context.CancelFunc
	applied   atomic.Int64 // the window whose level was applied, +1
	pushed    atomic.Int64 // the windows judged when llm_capacity was last pushed
	logged    atomic.Bool
}

// searchHorizon is how long the open model's schedule runs: past any search.
const searchHorizon = 10 * 24 * time.Hour

func newSharedSearch(cfg capacity.Config, seed uint64, tr *sharedSchedule, gauge *metrics.Metric,
	list *SearchList) (*sharedSearch, error) {
	s, err := capacity.New(cfg)
	if err != nil {
		return nil, err //nolint:wrapcheck // names the option
	}
	sh := &sharedSearch{search: s, cfg: s.Config(), gauge: gauge, trace: tr}
	sh.done, sh.finish = context.WithCancel(context.Background())
	if cfg.Model == capacity.ModelRate {
		sh.whole, err = searchArrivals(cfg, seed, tr)
		if err != nil {
			return nil, err //nolint:wrapcheck // names the option
		}
	} else {
		sh.gate = capacity.NewGate()
	}
	list.add(s)
	return sh, nil
}

// start begins the search on the test's clock, once per process: windows
// count from the test's start, the same on every instance.
func (sh *sharedSearch) start(vu modules.VU, scope k6env.VUScope) error {
	sh.startOnce.Do(func() {
		share, _, err := scope.ExecutionShare()
		if err != nil {
			sh.startErr = err
			return
		}
		sh.share = share
		sh.search.SetSegment(share.Segment(), share.Fraction())
		if sh.whole != nil {
			sh.sched = sh.whole.Part(share)
		}
		origin := time.Now()
		if es := lib.GetExecutionState(vu.Context()); es != nil && es.HasStarted() {
			origin = origin.Add(-es.GetCurrentTestRunDuration())
		}
		sh.search.Start(origin)
		go sh.tick(vu.Context())
	})
	return sh.startErr
}

// tickEvery is how often the search is advanced between calls.
const tickEvery = 100 * time.Millisecond

// tick advances the search and applies its level until the answer is
// known or the test ends.
func (sh *sharedSearch) tick(ctx context.Context) {
	t := time.NewTicker(tickEvery)
	defer t.Stop()
	for {
		if st := sh.advance(); st.Done {
			return
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		case <-sh.done.Done():
			return
		}
	}
}

// advance moves the search to now and applies its level.
func (sh *sharedSearch) advance() capacity.Step {
	st := sh.search.Advance(time.Now())
	if st.Done {
		sh.finish()
		return st
	}
	key := int64(st.Window)*2 + 1
	if st.Draining {
		key++
	}
	if sh.applied.Swap(key) == key {
		return st
	}
	level := st.Level
	if sh.sched != nil {
		if st.Draining {
			// Nothing falls due while the backlog drains, and a trace goes
			// on where it was held.
			sh.sched.Hold(0)
		} else {
			_, _ = sh.sched.SetRate(sh.speed(level), 0) // a positive rate: cannot fail
		}
	} else {
		sh.gate.Resize(int(sh.share.Count(uint64(level)))) // #nosec G115 -- a level of at least 1
	}
	return st
}

// searchArrivals is the open model's schedule, starting at cfg.Min: the
// trace's offsets looped (a level is then a time multiplier, set by speed),
// or synthetic arrivals (constant, Poisson, or bursty: gamma gaps of cfg.CV).
func searchArrivals(cfg capacity.Config, seed uint64, ss *sharedSchedule) (*schedule.Schedule, error) {
	level := cfg.Min
	if ss != nil {
		times := schedule.Times{Len: ss.Tr.Rows(), Span: ss.Tr.Span(), From: ss.Tr.OffsetsFrom}
		return schedule.Offsets(times, true, schedule.Options{Rate: level / ss.Tr.MeanRate(), Duration: searchHorizon}) //nolint:wrapcheck // names the option
	}
	so := schedule.Options{Rate: level, Duration: searchHorizon}
	switch cfg.Arrivals {
	case capacity.ArrivalsConstant:
		return schedule.Constant(so) //nolint:wrapcheck // names the option
	case capacity.ArrivalsBursty:
		return schedule.Gamma(so, cfg.CV, seed) //nolint:wrapcheck // names the option
	}
	return schedule.Poisson(so, seed) //nolint:wrapcheck // names the option
}

// speed is the schedule's speed at level: the level itself (credits/s), or
// a trace's time multiplier.
func (sh *sharedSearch) speed(level float64) float64 {
	if sh.trace == nil {
		return level
	}
	return level / sh.trace.Tr.MeanRate()
}

// traceTurn adds the trace's row for credit seq to a turn (nothing without
// a trace).
func (sh *sharedSearch) traceTurn(seq uint64, turn map[string]any) {
	if sh.trace != nil {
		addTraceRow(sh.trace, seq, turn)
	}
}
