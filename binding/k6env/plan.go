package k6env

// How long k6 was told to run each scenario, for an interrupted run's
// planned length (report.PlannedLength).

import (
	"time"

	"go.k6.io/k6/lib"
	"go.k6.io/k6/lib/executor"

	"github.com/llmstream/xk6-llmstream/internal/report"
)

// ScenarioPlans are the scenarios' planned lengths: a duration or the sum of
// the stages (graceful stops and ramp-downs left out: they only let calls
// in flight end); an iterations executor's maxDuration, a bound only. k6
// keeps some configurations as values and some as pointers. An externally
// controlled scenario without a duration runs until it is stopped: the
// test has no planned length then (nil).
func ScenarioPlans(opts lib.Options) []report.ScenarioPlan {
	plans := make([]report.ScenarioPlan, 0, len(opts.Scenarios))
	for _, sc := range opts.Scenarios {
		p := report.ScenarioPlan{Start: sc.GetStartTime()}
		switch c := sc.(type) {
		case executor.ConstantVUsConfig:
			p.Length = c.Duration.TimeDuration()
		case *executor.ConstantVUsConfig:
			p.Length = c.Duration.TimeDuration()
		case *executor.ConstantArrivalRateConfig:
			p.Length = c.Duration.TimeDuration()
		case executor.RampingVUsConfig:
			p.Length = stagesLength(c.Stages)
		case *executor.RampingVUsConfig:
			p.Length = stagesLength(c.Stages)
		case *executor.RampingArrivalRateConfig:
			p.Length = stagesLength(c.Stages)
		case executor.SharedIterationsConfig:
			p.Length, p.AtMost = c.MaxDuration.TimeDuration(), true
		case *executor.SharedIterationsConfig:
			p.Length, p.AtMost = c.MaxDuration.TimeDuration(), true
		case executor.PerVUIterationsConfig:
			p.Length, p.AtMost = c.MaxDuration.TimeDuration(), true
		case *executor.PerVUIterationsConfig:
			p.Length, p.AtMost = c.MaxDuration.TimeDuration(), true
		}
		if p.Length <= 0 {
			// An executor this module does not know, or one that runs until
			// stopped: the test has no planned length, rather than a wrong one.
			return nil
		}
		plans = append(plans, p)
	}
	return plans
}

func stagesLength(stages []executor.Stage) time.Duration {
	var d time.Duration
	for _, s := range stages {
		d += s.Duration.TimeDuration()
	}
	return d
}
