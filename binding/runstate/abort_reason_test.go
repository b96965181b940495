package runstate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.k6.io/k6/errext"
	"go.k6.io/k6/errext/exitcodes"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// runAbortKey and runAbortController have the shape of k6's test-run abort
// controller and its context key, which an extension cannot name.
type (
	runAbortKey        struct{}
	runAbortController struct{ reason error }
)

// runContext is a context like a VU's under k6's run context: the
// controller a few parents up, under cancel, timeout, value and
// without-cancel contexts.
func runContext(t *testing.T, c *runAbortController) context.Context {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ctx = context.WithValue(ctx, runAbortKey{}, c)
	ctx, cancelTimeout := context.WithTimeout(ctx, time.Hour)
	t.Cleanup(cancelTimeout)
	ctx = context.WithValue(context.WithoutCancel(ctx), struct{ name string }{"other"}, 1)
	ctx, cancelIter := context.WithCancel(ctx)
	t.Cleanup(cancelIter)
	return ctx
}

// useTestKey makes a read runAbortKey's controller.
func useTestKey(a *abortReader) {
	a.keyPkg, a.keyName = reflect.TypeFor[runAbortKey]().PkgPath(), "runAbortKey"
}

// The controller is found from a VU's context; its reason is the message
// when it is test.abort()'s interrupt error, and no abort otherwise.
func TestTheAbortMessageIsReadFromTheRunContext(t *testing.T) {
	c := &runAbortController{}
	a := &abortReader{}
	useTestKey(a)
	assert.False(t, a.watch(context.Background()), "a context without the controller")
	require.True(t, a.watch(runContext(t, c)))
	assert.True(t, a.watch(context.Background()), "one found is enough")

	_, ok := a.message()
	assert.False(t, ok, "a run not aborted")
	c.reason = errors.New("test run was aborted because k6 received a 'interrupt' signal")
	_, ok = a.message()
	assert.False(t, ok, "a signal is no test.abort()")
	c.reason = &errext.InterruptError{Reason: errext.AbortTest + ": enough for this test"}
	msg, ok := a.message()
	require.True(t, ok)
	assert.Equal(t, "enough for this test", msg)
	c.reason = &errext.InterruptError{Reason: errext.AbortTest}
	msg, ok = a.message()
	require.True(t, ok)
	assert.Empty(t, msg, "test.abort() without a message")
}

// A run whose context has no controller reads no abort.
func TestNoControllerNoAbort(t *testing.T) {
	var a abortReader // k6's own key type, absent here
	assert.False(t, a.watch(runContext(t, &runAbortController{reason: &errext.InterruptError{Reason: errext.AbortTest}})))
	_, ok := a.message()
	assert.False(t, ok)
}

// At the test's end an abort read from the run context is the stop, at the
// moment the first call was cut by the cancelled run.
func TestTheTestEndReadsTheAbort(t *testing.T) {
	c := &runAbortController{}
	var s StopState
	useTestKey(&s.abort)
	require.True(t, s.abort.watch(runContext(t, c)))

	deadline, cancelDeadline := context.WithDeadline(context.Background(), time.Now())
	defer cancelDeadline()
	s.NoteCut(deadline) // a scenario's end: not the abort's moment
	assert.True(t, s.cutAt.IsZero())

	c.reason = &errext.InterruptError{Reason: errext.AbortTest + ": enough"}
	cut, cancel := context.WithCancel(context.Background())
	cancel()
	s.NoteCut(cut)
	cutAt := s.cutAt
	require.False(t, cutAt.IsZero())
	s.NoteCut(cut)
	assert.Equal(t, cutAt, s.cutAt, "the first cut")

	s.end()
	i := s.Interruption(noneFailed)
	require.NotNil(t, i)
	assert.Equal(t, runrecord.StoppedByAbort, i.By)
	assert.Equal(t, "enough", i.Detail)
	assert.Equal(t, cutAt, i.At)
}

// byK6SignalHandler is the abort reason k6's signal handler gives the run
// (go.k6.io/k6/internal/cmd, in v1 and v2).
func byK6SignalHandler(sig os.Signal) error {
	return errext.WithAbortReasonIfNone(errext.WithExitCodeIfNone(
		fmt.Errorf("test run was aborted because k6 received a '%s' signal", sig), exitcodes.ExternalAbort,
	), errext.AbortedByUser)
}

// The signal k6 stopped the run for is read from the abort reason its
// signal handler gives; the REST API's stop (the user's too), test.abort()
// and an error that only reads like the handler's are no signal.
func TestTheSignalIsReadFromTheAbortReason(t *testing.T) {
	c := &runAbortController{}
	a := &abortReader{}
	useTestKey(a)
	require.True(t, a.watch(runContext(t, c)))
	_, ok := a.signal()
	assert.False(t, ok, "a run not aborted")
	for _, sig := range []struct {
		sig  os.Signal
		name string
	}{{os.Interrupt, "SIGINT"}, {syscall.SIGTERM, "SIGTERM"}} {
		c.reason = byK6SignalHandler(sig.sig)
		got, ok := a.signal()
		require.True(t, ok, "%v", c.reason)
		assert.Equal(t, sig.name, got)
		_, ok = a.message()
		assert.False(t, ok, "a signal is no test.abort()")
	}
	for _, reason := range []error{
		errext.WithAbortReasonIfNone(errext.WithExitCodeIfNone(errors.New("test run stopped from REST API"),
			exitcodes.ScriptStoppedFromRESTAPI), errext.AbortedByUser),
		errors.New("test run was aborted because k6 received a 'interrupt' signal"),
		&errext.InterruptError{Reason: errext.AbortTest + ": received a 'interrupt' signal"},
	} {
		c.reason = reason
		_, ok := a.signal()
		assert.False(t, ok, "%v", reason)
	}
}

// A signal k6 stopped the test for, which this process's listener had not
// been handed by the test's end, is the stop all the same: read from k6's
// abort reason, at the moment the first call was cut.
func TestASignalOnlyK6SawIsTheStop(t *testing.T) {
	c := &runAbortController{}
	s := &StopState{sigs: make(chan os.Signal, 2)}
	useTestKey(&s.abort)
	require.True(t, s.abort.watch(runContext(t, c)))
	c.reason = byK6SignalHandler(os.Interrupt)
	cut, cancel := context.WithCancel(context.Background())
	cancel()
	s.NoteCut(cut)
	s.interrupted = true
	s.end()
	assert.Equal(t, s.cutAt, requireSignalStop(t, s, "SIGINT").At)

	s.sigs <- syscall.SIGTERM // handed after the end: the stop stays SIGINT
	s.end()
	assert.Equal(t, "SIGINT", s.Interruption(noneFailed).Detail)

	first := &StopState{sigs: make(chan os.Signal, 2)}
	useTestKey(&first.abort)
	require.True(t, first.abort.watch(runContext(t, &runAbortController{reason: byK6SignalHandler(os.Interrupt)})))
	first.sigs <- syscall.SIGTERM // the listener's own, when it has one, is the stop
	first.end()
	assert.Equal(t, "SIGTERM", first.Interruption(noneFailed).Detail)
}
