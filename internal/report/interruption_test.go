package report

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// The planned length is the end of the scenario that ends last, a bound
// when that one is an iterations executor's maxDuration.
func TestPlannedLengthIsTheLastScenariosEnd(t *testing.T) {
	_, _, ok := PlannedLength(nil)
	assert.False(t, ok)
	length, atMost, ok := PlannedLength([]ScenarioPlan{{Length: 30 * time.Second}, {Start: 10 * time.Second, Length: 25 * time.Second}})
	require.True(t, ok)
	assert.Equal(t, 35*time.Second, length)
	assert.False(t, atMost)
	length, atMost, _ = PlannedLength([]ScenarioPlan{{Length: 30 * time.Second}, {Length: 10 * time.Minute, AtMost: true}})
	assert.Equal(t, 10*time.Minute, length)
	assert.True(t, atMost)
	_, atMost, _ = PlannedLength([]ScenarioPlan{{Length: time.Minute, AtMost: true}, {Length: time.Minute}})
	assert.False(t, atMost, "a scenario that runs its whole minute ends the test then")
}

// The cause named is the one k6 acted on: a signal first, then the
// script's test.abort(), then a threshold with abortOnFail, else k6's own.
func TestTheStopNamesItsCause(t *testing.T) {
	start := t0
	base := Stop{At: start.Add(12 * time.Second), Start: start, Plans: []ScenarioPlan{{Length: 30 * time.Second}}}
	i := base.Interruption()
	assert.Equal(t, runrecord.StoppedByK6, i.By)
	assert.InDelta(t, 12, i.RanS, 1e-9)
	require.NotNil(t, i.PlannedS)
	assert.InDelta(t, 30, *i.PlannedS, 1e-9)

	s := base
	s.Thresholds = []string{"llm_failed: rate<0.1"}
	assert.Equal(t, runrecord.StoppedByThreshold, s.Interruption().By)
	s.Aborted, s.AbortMessage = true, "test aborted: no model"
	assert.Equal(t, runrecord.StoppedByAbort, s.Interruption().By)
	assert.Equal(t, "test aborted: no model", s.Interruption().Detail)
	s.Signal = "SIGTERM"
	assert.Equal(t, runrecord.StoppedBySignal, s.Interruption().By)
	assert.Equal(t, "SIGTERM", s.Interruption().Detail)

	s = Stop{At: start}
	assert.Nil(t, s.Interruption().PlannedS, "no plan: unknown, not 0")
	assert.Zero(t, s.Interruption().RanS)
}
