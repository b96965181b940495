package selfwatch

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

func TestDeltaQuantile(t *testing.T) {
	buckets := []float64{0, 0.001, 0.002, 0.004, 0.008}
	prev := []uint64{10, 10, 10, 10}
	cur := []uint64{10 + 98, 10 + 1, 10, 10 + 1} // 100 new: 98 under 1 ms, 1 under 2 ms, 1 under 8 ms
	if got := deltaQuantile(prev, cur, buckets, 0.5); got != time.Millisecond {
		t.Fatalf("p50 = %v, want 1ms", got)
	}
	if got := deltaQuantile(prev, cur, buckets, 0.99); got != 2*time.Millisecond {
		t.Fatalf("p99 = %v, want 2ms", got)
	}
	if got := deltaQuantile(prev, cur, buckets, 1); got != 8*time.Millisecond {
		t.Fatalf("max = %v, want 8ms", got)
	}
	if got := deltaQuantile(cur, cur, buckets, 0.99); got != 0 {
		t.Fatalf("no new samples: %v, want 0", got)
	}
}

func TestSinceTakesTheMeanTickOfTheWindow(t *testing.T) {
	w := New(time.Second, 10*time.Second)
	t0 := time.Unix(1000, 0)
	for i, lag := range []time.Duration{5, 1, 9, 2} {
		w.ring[w.next] = Tick{At: t0.Add(time.Duration(i) * time.Second), SchedP99: lag * time.Millisecond}
		w.next, w.n = w.next+1, w.n+1
	}
	if _, ok := New(time.Second, time.Second).Since(t0); ok {
		t.Fatal("a watcher without ticks must say so")
	}
	if lag, _ := w.Since(t0.Add(1500 * time.Millisecond)); lag != 11*time.Millisecond/2 {
		t.Fatalf("window from 1.5 s: %v, want the mean of 9 and 2 ms", lag)
	}
	if lag, _ := w.Since(t0.Add(3500 * time.Millisecond)); lag != 2*time.Millisecond {
		t.Fatalf("call shorter than a tick: %v, want the latest tick's 2ms", lag)
	}
	if lag, _ := w.Since(t0); lag != 17*time.Millisecond/4 {
		t.Fatalf("whole run: %v, want the mean of 5, 1, 9 and 2 ms", lag)
	}
}

// A process whose CPUs are all busy makes runnable goroutines wait: the lag
// must rise above what an idle process shows. The bound is loose on purpose
// (a loaded CI machine only makes the busy reading larger).
func TestLagRisesWhenTheProcessIsCPUBound(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := New(20*time.Millisecond, 5*time.Second)
	w.Acquire()
	defer w.Release()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 * runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() { // spinners that never block: the scheduler must preempt them
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					for i := 0; i < 1e5; i++ {
						_ = i * i
					}
				}
			}
		}()
	}
	start := time.Now()
	time.Sleep(500 * time.Millisecond)
	busy, ok := w.Since(start)
	close(stop)
	wg.Wait()
	if !ok {
		t.Fatal("no tick in 500 ms")
	}
	if busy < time.Millisecond {
		t.Fatalf("lag while %d spinners share %d CPUs: %v, want at least 1ms", 4*runtime.GOMAXPROCS(0), runtime.GOMAXPROCS(0), busy)
	}
}

func TestAcquireReleaseLeavesNoGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := New(time.Millisecond, time.Second)
	w.Acquire()
	w.Acquire()
	for deadline := time.Now().Add(5 * time.Second); w.Latest().At.IsZero(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no tick taken in 5 s at a 1 ms interval")
		}
	}
	w.Release()
	w.Release()
	w.Acquire() // restartable
	w.Release()
}

// Calls made one after another keep the sampling goroutine: it outlives
// its last user by lingerTicks intervals, then ends on its own.
func TestTheSamplerLingersBetweenCalls(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := New(10*time.Millisecond, time.Second)
	w.Acquire()
	w.Release()
	w.mu.Lock()
	running := w.running
	w.mu.Unlock()
	assert.True(t, running, "still sampling right after the last user")
	w.Acquire() // the next call: no new goroutine, no new baseline
	w.Release()
	assert.Eventually(t, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return !w.running
	}, 5*time.Second, 5*time.Millisecond, "ends itself once idle")
}
