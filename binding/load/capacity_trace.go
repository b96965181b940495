package load

import (
	"errors"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// A trace as the capacity search's arrivals: Capacity.search({rate, trace:
// Schedule.trace(path, options)}) replays the trace's own arrivals instead
// of Poisson or constant ones. A level of L req/s runs the trace at
// L / (its recorded mean rate) times its recorded speed, so its mean rate is
// the level while its bursts, its rows' lengths and their shared prefixes
// stay as recorded: the answer is "this traffic shape at N req/s", and as
// that time multiplier. The search's schedule is its own, looped for as
// long as the search runs: each window goes on from where the last one
// stopped, so windows see different stretches of the trace. Here the
// option is read; capacity_load.go runs the trace at each level's speed.

// searchTraceOf reads the search's trace option: a Schedule.trace(...) whose
// rows and prompts the search replays (nil when not given).
func searchTraceOf(v any) (*sharedSchedule, error) {
	if v == nil {
		return nil, nil //nolint:nilnil // no trace: synthetic arrivals
	}
	j, ok := v.(*jsSchedule)
	if !ok || j.s.Tr == nil {
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
	return &runrecord.CapacityTrace{Name: ss.Tr.Name, Rows: ss.Tr.Rows(), MeanRate: ss.Tr.MeanRate()}
}

// traceOptionsOf is what tells two traces of one file apart, for the
// search's store key (nil without a trace).
func traceOptionsOf(ss *sharedSchedule) any {
	if ss == nil {
		return nil
	}
	return ss.topt
}
