package k6env

// What the module reads of k6's execution state: whether a call is made in
// setup() or teardown() and when the test started, the rate an arrival-rate
// scenario runs at now, and whether a scenario's time is over.

import (
	"context"
	"time"

	"go.k6.io/k6/lib"
	"go.k6.io/k6/lib/executor"
	"go.k6.io/k6/metrics"

	"github.com/llmstream/xk6-llmstream/internal/report"
)

// runPhase says whether a call is made in setup() or teardown() (k6's
// execution status, or the group tag k6 gives those calls) and when the test
// started (zero before it has).
func RunPhase(ctx context.Context, tags *metrics.TagSet) (phase string, testStart time.Time) {
	if es := lib.GetExecutionState(ctx); es != nil {
		switch es.GetCurrentExecutionStatus() { //nolint:exhaustive // only these two phases matter
		case lib.ExecutionStatusSetup:
			phase = report.PhaseSetup
		case lib.ExecutionStatusTeardown:
			phase = report.PhaseTeardown
		}
		if es.HasStarted() {
			testStart = time.Now().Add(-es.GetCurrentTestRunDuration())
		}
	}
	if g, ok := tags.Get("group"); ok && phase == "" {
		switch g {
		case lib.GroupSeparator + "setup":
			phase = report.PhaseSetup
		case lib.GroupSeparator + "teardown":
			phase = report.PhaseTeardown
		}
	}
	return phase, testStart
}

// arrivalRate is the rate (iterations/s) an arrival-rate scenario runs at
// now, from its configuration (a ramp is linear between stage targets), or 0
// for other executors: their load is the VU count. The report uses it as the
// load level of the call.
func ArrivalRate(ctx context.Context, st *lib.State) float64 {
	ss := lib.GetScenarioState(ctx)
	if ss == nil || st == nil {
		return 0
	}
	elapsed := time.Since(ss.StartTime)
	switch c := st.Options.Scenarios[ss.Name].(type) {
	case *executor.ConstantArrivalRateConfig:
		return perSecond(float64(c.Rate.Int64), c.TimeUnit.TimeDuration())
	case *executor.RampingArrivalRateConfig:
		from := float64(c.StartRate.Int64)
		for _, s := range c.Stages {
			d, to := s.Duration.TimeDuration(), float64(s.Target.Int64)
			if elapsed < d {
				return perSecond(from+(to-from)*float64(elapsed)/float64(d), c.TimeUnit.TimeDuration())
			}
			elapsed -= d
			from = to
		}
		return perSecond(from, c.TimeUnit.TimeDuration())
	}
	return 0
}

func perSecond(n float64, unit time.Duration) float64 {
	if unit <= 0 || n <= 0 {
		return 0
	}
	return n / unit.Seconds()
}

// scenarioOver tells whether the VU's scenario is past its regular time
// (duration or maxDuration): k6 reports its progress as complete then, and
// starts no more iterations; the graceful stop only lets calls in flight
// end.
func ScenarioOver(ctx context.Context) bool {
	ss := lib.GetScenarioState(ctx)
	if ss == nil || ss.ProgressFn == nil {
		return false
	}
	p, _ := ss.ProgressFn()
	return p >= 1
}

func SleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
