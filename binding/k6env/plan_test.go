package k6env

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.k6.io/k6/lib"
	"go.k6.io/k6/lib/executor"
	"go.k6.io/k6/lib/types"

	"github.com/llmstream/xk6-llmstream/internal/report"
)

func dur(d time.Duration) types.NullDuration { return types.NewNullDuration(d, true) }

// Each executor's planned length, as k6 keeps its configuration (value or
// pointer); one that runs until stopped leaves the test without a plan.
func TestScenarioPlansReadEachExecutor(t *testing.T) {
	cv := executor.NewConstantVUsConfig("cv")
	cv.Duration = dur(30 * time.Second)
	ramp := executor.NewRampingVUsConfig("ramp")
	ramp.StartTime = dur(5 * time.Second)
	ramp.Stages = []executor.Stage{{Duration: dur(10 * time.Second)}, {Duration: dur(20 * time.Second)}}
	car := executor.NewConstantArrivalRateConfig("car")
	car.Duration = dur(time.Minute)
	iters := executor.NewSharedIterationsConfig("iters")
	iters.MaxDuration = dur(10 * time.Minute)

	plans := ScenarioPlans(lib.Options{Scenarios: lib.ScenarioConfigs{"cv": cv, "ramp": ramp, "car": car, "iters": iters}})
	assert.ElementsMatch(t, []report.ScenarioPlan{
		{Length: 30 * time.Second},
		{Start: 5 * time.Second, Length: 30 * time.Second},
		{Length: time.Minute},
		{Length: 10 * time.Minute, AtMost: true},
	}, plans)

	ext := &executor.ExternallyControlledConfig{BaseConfig: executor.NewBaseConfig("ext", "externally-controlled")} // no duration: until stopped
	assert.Nil(t, ScenarioPlans(lib.Options{Scenarios: lib.ScenarioConfigs{"cv": cv, "ext": ext}}))
}
