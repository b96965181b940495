// Package selfwatch measures how late the load generator itself runs. Every
// timestamp the client takes is late by the time its goroutine waited for a
// CPU; when that wait grows, client-side figures (TTFT, gaps) grow with it
// although the server did not slow down. Two independent signals are kept:
//
//   - the Go scheduler's own latency histogram (/sched/latencies:seconds): how
//     long runnable goroutines waited to run, read as a p99 per tick;
//   - timer lateness: how far past its deadline a periodic timer fired.
//
// The lag of a tick is the larger of the two. A call's lag is the mean tick
// lag seen while it ran. Nothing here imports k6.
package selfwatch

import (
	"math"
	"runtime/metrics"
	"sync"
	"time"
)

const schedMetric = "/sched/latencies:seconds"

// Tick is one measurement interval.
type Tick struct {
	At        time.Time     // when the tick was taken (its interval ends here)
	TimerLate time.Duration // how late the tick's timer fired
	SchedP99  time.Duration // p99 of the scheduler latency of goroutines run during the interval
}

// Lag is the tick's client lag: the larger of its two signals.
func (t Tick) Lag() time.Duration { return max(t.TimerLate, t.SchedP99) }

// Watcher samples the process's lag every interval while started. One per
// process is enough: the scheduler is shared by every stream.
type Watcher struct {
	interval time.Duration

	mu    sync.Mutex
	ring  []Tick // the last len(ring) ticks, oldest overwritten
	next  int
	n     int
	users int
	// running says the sampling goroutine runs; it ends itself at the first
	// tick lingerTicks intervals after users fell to 0 (idleSince).
	running   bool
	idleSince time.Time

	sample  []metrics.Sample
	last    []uint64 // the scheduler histogram's counts at the previous tick
	buckets []float64
}

// New returns a stopped watcher that keeps `keep` of history at `interval`.
func New(interval, keep time.Duration) *Watcher {
	n := max(int(keep/interval), 1)
	return &Watcher{interval: interval, ring: make([]Tick, n)}
}

// lingerTicks is how many intervals the sampling goroutine outlives its
// last user. A script that makes one call after another (one VU, a
// sequence of turns) has no call in flight between two of them; without
// the linger each call started a goroutine and read the scheduler's
// histogram afresh, and a short call never saw a tick of its own.
const lingerTicks = 4

// Acquire starts the sampling goroutine for its first user (unless it still
// lingers after the last one); it ends itself lingerTicks intervals after
// the last Release, so a test that ends leaves no goroutine behind.
func (w *Watcher) Acquire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.users++
	if w.running {
		return
	}
	w.running = true
	w.sample = []metrics.Sample{{Name: schedMetric}}
	w.last, w.buckets = nil, nil
	w.readSched() // the baseline the first tick's delta is taken from
	go w.run()
}

// Release undoes one Acquire.
func (w *Watcher) Release() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.users--
	if w.users == 0 {
		w.idleSince = time.Now()
	}
}

func (w *Watcher) run() {
	t := time.NewTimer(w.interval)
	defer t.Stop()
	due := time.Now().Add(w.interval)
	for now := range t.C {
		late := max(now.Sub(due), 0)
		w.mu.Lock()
		if w.users == 0 && now.Sub(w.idleSince) >= lingerTicks*w.interval {
			w.running = false
			w.mu.Unlock()
			return
		}
		p99 := w.readSched()
		w.ring[w.next] = Tick{At: now, TimerLate: late, SchedP99: p99}
		w.next = (w.next + 1) % len(w.ring)
		w.n = min(w.n+1, len(w.ring))
		w.mu.Unlock()
		due = now.Add(w.interval)
		t.Reset(w.interval)
	}
}

// readSched returns the p99 of the scheduler latencies recorded since the
// previous call (0 when none were). Called with mu held.
func (w *Watcher) readSched() time.Duration {
	metrics.Read(w.sample)
	if w.sample[0].Value.Kind() != metrics.KindFloat64Histogram {
		return 0
	}
	h := w.sample[0].Value.Float64Histogram()
	if w.buckets == nil {
		w.buckets = h.Buckets // never changes for the process's life
	}
	prev := w.last
	w.last = append(w.last[:0:0], h.Counts...)
	if prev == nil {
		return 0
	}
	return deltaQuantile(prev, h.Counts, w.buckets, 0.99)
}

// deltaQuantile is the q-quantile of the histogram cur−prev, reported as the
// upper bound of the bucket it falls in (a conservative reading).
func deltaQuantile(prev, cur []uint64, buckets []float64, q float64) time.Duration {
	var total uint64
	for i := range cur {
		total += cur[i] - prev[i]
	}
	if total == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(total)))
	var seen uint64
	for i := range cur {
		seen += cur[i] - prev[i]
		if seen >= rank {
			upper := buckets[i+1]
			if math.IsInf(upper, 1) {
				upper = buckets[i]
			}
			return time.Duration(upper * float64(time.Second))
		}
	}
	return 0
}

// Latest is the most recent tick (zero before the first).
func (w *Watcher) Latest() Tick {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n == 0 {
		return Tick{}
	}
	return w.ring[(w.next-1+len(w.ring))%len(w.ring)]
}

// Since is the mean lag of the ticks taken since start: how late the process
// typically ran while a call did (a call is observed as it ends, so these are
// the ticks that ran while it did). The mean, not the largest: each tick is
// already a P99, and the largest of a long call's hundred ticks would grow
// with the call's length rather than with the load. A call shorter than one
// tick gets the latest tick, the nearest reading there is. ok is false
// before the first tick.
func (w *Watcher) Since(start time.Time) (lag time.Duration, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var sum time.Duration
	n := 0
	for i := range w.n {
		t := w.ring[(w.next-1-i+len(w.ring))%len(w.ring)]
		if t.At.Before(start) && i > 0 {
			break
		}
		sum += t.Lag()
		n++
	}
	if n == 0 {
		return 0, false
	}
	return sum / time.Duration(n), true
}
