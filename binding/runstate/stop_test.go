package runstate

import (
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.k6.io/k6/errext"

	"github.com/llmstream/xk6-llmstream/internal/report"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// iterData has the shape of k6's event.IterData, which an extension cannot
// name.
type iterData struct {
	Iteration int64
	Error     error
}

func noneFailed(string, string) bool { return false }

// test.abort() shows as the interrupt error of the iteration it ended; any
// other iteration error is no stop.
func TestTheIterationEndTellsTestAbort(t *testing.T) {
	var s StopState
	s.noteAbort(iterError(iterData{Error: errors.New("TypeError: x is undefined")}))
	s.noteAbort(iterError(iterData{}))
	s.noteAbort(iterError("not a struct"))
	assert.Nil(t, s.Interruption(noneFailed), "a run that ran to its end")

	s.noteAbort(iterError(iterData{Error: &errext.InterruptError{Reason: errext.AbortTest + ": enough for this test"}}))
	s.noteAbort(iterError(&iterData{Error: &errext.InterruptError{Reason: errext.AbortTest + ": a second one"}}))
	i := s.Interruption(noneFailed)
	require.NotNil(t, i)
	assert.Equal(t, runrecord.StoppedByAbort, i.By)
	assert.Equal(t, "enough for this test", i.Detail, "the first abort")
}

// A signal names the stop whatever else happened; one after the test's end
// (in handleSummary) is none.
func TestASignalBeforeTheEndIsTheStop(t *testing.T) {
	var s StopState
	s.plans = []report.ScenarioPlan{{Length: 30 * time.Second}}
	s.abortOnFail = map[string][]string{"llm_ttft": {"p(95)<1"}}
	s.signal, s.signalAt = signalName(syscall.SIGTERM), time.Now()
	s.interrupted, s.ended = true, true
	i := s.Interruption(func(m, src string) bool { return m == "llm_ttft" && src == "p(95)<1" })
	require.NotNil(t, i)
	assert.Equal(t, runrecord.StoppedBySignal, i.By)
	assert.Equal(t, "SIGTERM", i.Detail)
	require.NotNil(t, i.PlannedS)
	assert.InDelta(t, 30, *i.PlannedS, 0)

	late := &StopState{}
	late.end()
	sigs, done, exited := make(chan os.Signal), make(chan struct{}), make(chan struct{})
	go func() { late.watchSignals(sigs, done); close(exited) }()
	sigs <- syscall.SIGINT // unbuffered: received before the next send
	sigs <- syscall.SIGINT
	close(done)
	<-exited
	assert.Nil(t, late.Interruption(noneFailed), "Ctrl+C during handleSummary stops nothing")

	early := &StopState{}
	sigs, done, exited = make(chan os.Signal), make(chan struct{}), make(chan struct{})
	go func() { early.watchSignals(sigs, done); close(exited) }()
	sigs <- syscall.SIGINT
	sigs <- syscall.SIGTERM
	close(done)
	<-exited
	early.end()
	require.NotNil(t, early.Interruption(noneFailed))
	assert.Equal(t, "SIGINT", early.Interruption(noneFailed).Detail, "the first signal")
}

// Without a signal or test.abort(), k6's interrupted status and a failed
// abortOnFail threshold name the threshold.
func TestAFailedAbortOnFailThresholdIsTheStop(t *testing.T) {
	var s StopState
	s.abortOnFail = map[string][]string{"llm_ttft": {"p(95)<1"}, "llm_failed": {"rate<0.5"}}
	s.interrupted, s.ended, s.endedAt = true, true, time.Now()
	i := s.Interruption(func(m, _ string) bool { return m == "llm_ttft" })
	require.NotNil(t, i)
	assert.Equal(t, runrecord.StoppedByThreshold, i.By)
	assert.Equal(t, "llm_ttft: p(95)<1", i.Detail)
	i = s.Interruption(noneFailed)
	assert.Equal(t, runrecord.StoppedByK6, i.By)
}

// A signal delivered before the test's end but not yet read by the watcher
// (its goroutine not yet run on a busy machine) is the stop all the same:
// k6 ended the test on it.
func TestASignalNotYetReadAtTheEndIsTheStop(t *testing.T) {
	s := &StopState{sigs: make(chan os.Signal, 2)}
	s.sigs <- syscall.SIGINT
	s.interrupted = true
	s.end()
	requireSignalStop(t, s, "SIGINT")

	s.sigs <- syscall.SIGTERM // after the end: none
	s.end()
	assert.Equal(t, "SIGINT", s.Interruption(noneFailed).Detail)
}

// requireSignalStop checks that s's stop is the signal sig, and returns it.
func requireSignalStop(t *testing.T, s *StopState, sig string) *runrecord.Interruption {
	t.Helper()
	i := s.Interruption(noneFailed)
	require.NotNil(t, i)
	assert.Equal(t, runrecord.StoppedBySignal, i.By)
	assert.Equal(t, sig, i.Detail)
	return i
}
