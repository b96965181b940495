package llmstream

import (
	"errors"
	"fmt"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/schedule"
)

// A trace as the capacity search's arrivals: Capacity.search({rate, trace:
// Schedule.trace(path, options)}) replays the trace's own arrivals instead
// of Poisson or constant ones. A level of L req/s runs the trace at
// L / (its recorded mean rate) times its recorded speed, so its mean rate is
// the level while its bursts, its rows' lengths and their shared prefixes
// stay as recorded: the answer is "this traffic shape at N req/s", and as
// that time multiplier. The search's schedule is its own, looped for as
// long as the search runs: each window goes on from where the last one
// stopped, so windows see different stretches of the trace.

// searchTraceOf reads the search's trace option: a Schedule.trace(...) whose
// rows and prompts the search replays (nil when not given).
func searchTraceOf(v any) (*sharedSchedule, error) {
	if v == nil {
		return nil, nil //nolint:nilnil // no trace: synthetic arrivals
	}
	j, ok := v.(*jsSchedule)
	if !ok || j.s.tr == nil {
		return nil, errors.New("trace must be a Schedule.trace(path, options)")
	}
	switch {
	case j.s.topt.RateScale != 0:
		return nil, errors.New("trace: rateScale is the search's to set (each level runs the trace at level / its mean rate); " +
			"leave it out of Schedule.trace's options")
	case j.s.topt.Loop:
		return nil, errors.New("trace: loop and loopFor are the search's (it replays the trace in a loop for as long as it runs); " +
			"leave them out of Schedule.trace's options")
	}
	j.s.mu.Lock()
	j.s.searched = true
	j.s.mu.Unlock()
	return j.s, nil
}

// searchTraceRecord is the trace as the search's record names it.
func searchTraceRecord(ss *sharedSchedule) *runrecord.CapacityTrace {
	if ss == nil {
		return nil
	}
	return &runrecord.CapacityTrace{Name: ss.tr.Name, Rows: ss.tr.Rows(), MeanRate: ss.tr.MeanRate()}
}

// searchArrivals is the open model's schedule: the trace's offsets looped
// (a level is then a time multiplier, set by speed), or synthetic arrivals.
func searchArrivals(o searchOptions, ss *sharedSchedule, level float64) (*schedule.Schedule, error) {
	if ss != nil {
		times := schedule.Times{Len: ss.tr.Rows(), Span: ss.tr.Span(), From: ss.tr.OffsetsFrom}
		return schedule.Offsets(times, true, schedule.Options{Rate: level / ss.tr.MeanRate(), Duration: searchHorizon}) //nolint:wrapcheck // names the option
	}
	so := schedule.Options{Rate: level, Duration: searchHorizon}
	if o.Arrivals == "constant" {
		return schedule.Constant(so) //nolint:wrapcheck // names the option
	}
	return schedule.Poisson(so, o.Seed) //nolint:wrapcheck // names the option
}

// speed is the schedule's speed at level: the level itself (credits/s), or
// a trace's time multiplier.
func (sh *sharedSearch) speed(level float64) float64 {
	if sh.trace == nil {
		return level
	}
	return level / sh.trace.tr.MeanRate()
}

// traceTurn adds the trace's row for credit seq to a turn (nothing without
// a trace).
func (sh *sharedSearch) traceTurn(seq uint64, turn map[string]any) {
	if sh.trace != nil {
		addTraceRow(sh.trace, seq, turn)
	}
}

// checkSearchTrace refuses a trace with synthetic arrivals' options.
func checkSearchTrace(o searchOptions) error {
	if o.Trace != nil && (o.Arrivals != "" || o.Seed != 0) {
		return fmt.Errorf("give trace or arrivals/seed, not both: the trace's rows are the arrivals")
	}
	return nil
}

// traceOptionsOf is what tells two traces of one file apart, for the
// search's store key (nil without a trace).
func traceOptionsOf(ss *sharedSchedule) any {
	if ss == nil {
		return nil
	}
	return ss.topt
}
