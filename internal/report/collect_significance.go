package report

import (
	"math"

	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
)

// The rules that compare load stages work on stages of a few dozen calls (a
// step load of 12 s stages gives 10–50 per stage), too few for a fixed "medians
// of at least N calls" rule to be both usable and safe. Instead each median
// comes with a distribution-free confidence interval, and a rule only says that
// one median is above another when the intervals do not overlap: a stage of 10
// calls then needs a very large effect, one of 200 a modest one, and a
// healthy run's noise never crosses.

// stageMinCalls is the fewest calls of a stage any rule looks at: below it the
// interval below spans nearly the whole sample and says nothing.
const stageMinCalls = 10

// medianZ is the normal quantile of the intervals (99 %): several stages and
// rules are compared per run, so each comparison is held to a strict level.
const medianZ = 2.576

// medianInterval is a confidence interval of the median of s: the sample
// quantiles at 0.5 ∓ z·0.5/√n, the order statistics whose ranks bound the
// median's rank with the binomial distribution's normal approximation. It
// makes no assumption on the shape of the distribution.
func medianInterval(s *sketch.Sketch) (lo, hi float64) {
	n := float64(s.Count())
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	d := medianZ * 0.5 / math.Sqrt(n)
	return s.Quantile(math.Max(0, 0.5-d)), s.Quantile(math.Min(1, 0.5+d))
}

// clearlyAbove says whether the median of a is above the median of b beyond
// sampling noise: a's interval lies entirely above b's.
func clearlyAbove(a, b *sketch.Sketch) bool {
	if a.Count() < stageMinCalls || b.Count() < stageMinCalls {
		return false
	}
	alo, _ := medianInterval(a)
	_, bhi := medianInterval(b)
	return alo > bhi
}

func q50(s *sketch.Sketch) float64 { return s.Quantile(0.5) }
