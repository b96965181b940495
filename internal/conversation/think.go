package conversation

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Think time distributions.
const (
	ThinkFixed     = "fixed"
	ThinkUniform   = "uniform"
	ThinkLognormal = "lognormal"
)

// Think is the pause a user takes before each turn after the first: reading
// the answer, typing the next question. It is waited outside every call, so
// it is in the job's time and never in a call's TTFT.
type Think struct {
	Dist     string
	Min, Max time.Duration // uniform
	Median   time.Duration // fixed (the value) and lognormal
	Sigma    float64       // lognormal: the log's standard deviation
}

// Check says what is wrong with t, naming the option.
func (t Think) Check() error {
	switch t.Dist {
	case "", ThinkFixed:
	case ThinkUniform:
		if t.Max < t.Min {
			return fmt.Errorf("think: max (%s) is below min (%s)", t.Max, t.Min)
		}
	case ThinkLognormal:
		if t.Median <= 0 || t.Sigma < 0 || math.IsNaN(t.Sigma) || math.IsInf(t.Sigma, 0) {
			return fmt.Errorf("think: lognormal needs a median above 0 and a sigma of 0 or more, got median %s sigma %v", t.Median, t.Sigma)
		}
	default:
		return fmt.Errorf("think: dist must be 'fixed', 'uniform' or 'lognormal', got %q", t.Dist)
	}
	return nil
}

// Sample draws one pause.
func (t Think) Sample(r *rand.Rand) time.Duration {
	switch t.Dist {
	case ThinkUniform:
		if t.Max == t.Min {
			return t.Min
		}
		return t.Min + time.Duration(r.Int64N(int64(t.Max-t.Min)+1))
	case ThinkLognormal:
		d := float64(t.Median) * math.Exp(t.Sigma*r.NormFloat64())
		if d > float64(time.Hour) { // a tail draw must not stall a VU for good
			d = float64(time.Hour)
		}
		return time.Duration(d)
	default:
		return t.Median
	}
}

// ShiftDue is the due time of a turn sent after a think pause from
// thinkStart to thinkEnd, given the schedule credit's due (zero: none).
// The pause is the user's, not the load generator's lateness: a credit
// claimed before the pause is due the pause later, one claimed during it
// when it ends.
func ShiftDue(due, thinkStart, thinkEnd time.Time) time.Time {
	switch {
	case due.IsZero() || !due.Before(thinkEnd):
		return due
	case due.Before(thinkStart):
		return due.Add(thinkEnd.Sub(thinkStart))
	default:
		return thinkEnd
	}
}
