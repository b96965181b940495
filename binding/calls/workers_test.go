package calls

import (
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// run never waits for a goroutine to be free: calls that block together all
// run at once; and once the calls stop, every goroutine ends. (Not parallel:
// the leak check would see other tests' goroutines.)
func TestWorkersRunEveryCallAtOnceAndEnd(t *testing.T) { //nolint:paralleltest // see above
	ignore := goleak.IgnoreCurrent()
	w := NewWorkers()
	release := make(chan struct{})
	var started sync.WaitGroup
	const n = 10
	started.Add(n)
	for range n {
		w.run(func() { started.Done(); <-release })
	}
	started.Wait()
	close(release)
	goleak.VerifyNone(t, ignore) // retries past workerIdle
}

// A call that comes while a goroutine waits runs on it, with the stack it
// grew.
func TestWorkersReuseAnIdleGoroutine(t *testing.T) {
	t.Parallel()
	w := NewWorkers()
	id := func() string {
		b := make([]byte, 64)
		return strings.Fields(string(b[:runtime.Stack(b, false)]))[1] // "goroutine 17 [running]:"
	}
	ids := make(chan string, 2)
	w.run(func() { ids <- id() })
	first := <-ids
	time.Sleep(workerIdle / 4) // the goroutine is back in its wait
	w.run(func() { ids <- id() })
	require.Equal(t, first, <-ids)
}
