package report

import (
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/protocol"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/compare"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

func benchObservation(rng *rand.Rand, start time.Time, gaps int) *Observation {
	o := &Observation{
		Result: &stream.Result{
			Start: start, End: start.Add(3 * time.Second), OK: true, TTFB: measure.Of(5 * time.Millisecond),
			TTFT: measure.Of(time.Duration(100+rng.IntN(900)) * time.Millisecond), E2E: measure.Of(3 * time.Second),
			TPOT: measure.Of(20 * time.Millisecond), ClientParse: time.Millisecond, TokensPerSec: 40 + 20*rng.Float64(),
			OutputTokens: int64(gaps + 1), Cache: stream.CacheMiss, Usage: &protocol.Usage{PromptTokens: 300},
		},
		Origin: record.Origin{Category: []string{"short", "medium", "long_context"}[rng.IntN(3)], Model: "sim-large"},
		Active: 50,
		VUs:    50,
	}
	for range gaps {
		o.Gaps = append(o.Gaps, uint32(15+rng.IntN(10))*1000) // µs
	}
	return o
}

// BenchmarkCollectorAdd measures Add from many goroutines at once, as VUs call it.
func BenchmarkCollectorAdd(b *testing.B) {
	for _, tc := range []struct {
		name string
		gaps int
	}{{"no-gaps", 0}, {"3-gaps", 3}, {"200-gaps", 200}} {
		b.Run(tc.name, func(b *testing.B) {
			c := NewCollector(Options{Start: t0})
			var seq atomic.Int64
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				rng := rand.New(rand.NewPCG(uint64(seq.Add(1)), 1))
				obs := make([]*Observation, 64)
				for i := range obs {
					obs[i] = benchObservation(rng, t0, tc.gaps)
				}
				i := 0
				for pb.Next() {
					o := obs[i%len(obs)]
					o.Start = t0.Add(time.Duration(seq.Add(1)) * time.Millisecond) // ~1000 calls per simulated second
					o.End = o.Start.Add(3 * time.Second)
					c.Add(o)
					i++
				}
			})
		})
	}
}

// heapAfter feeds `hours` of calls at `perSec` calls/s and returns the live heap.
func heapAfter(hours float64, perSec int) uint64 {
	rng := rand.New(rand.NewPCG(1, 2))
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	c := NewCollector(Options{Start: t0})
	n := int(hours * 3600 * float64(perSec))
	for i := range n {
		c.Add(benchObservation(rng, t0.Add(time.Duration(i)*time.Second/time.Duration(perSec)), 0))
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(c)
	if after.HeapAlloc < before.HeapAlloc {
		return 0
	}
	return after.HeapAlloc - before.HeapAlloc
}

// TestMemoryIndependentOfRunLength: four hours cost about what one hour does.
func TestMemoryIndependentOfRunLength(t *testing.T) {
	if testing.Short() {
		t.Skip("feeds 72 000 observations")
	}
	one := heapAfter(1, 4)
	four := heapAfter(4, 4)
	t.Logf("live heap: 1 h %.1f MB, 4 h %.1f MB", float64(one)/1e6, float64(four)/1e6)
	if float64(four) > 1.5*float64(one)+2e6 {
		t.Fatalf("memory grows with run length: 1 h %d B, 4 h %d B", one, four)
	}
}

// BenchmarkMemoryPerHour reports the collector's live heap after an hour at 20 calls/s.
func BenchmarkMemoryPerHour(b *testing.B) {
	for range b.N {
		b.ReportMetric(float64(heapAfter(1, 20))/1e6, "MB/hour")
	}
}

// BenchmarkCompare is the bootstrap of a full comparison (3 categories × 3 metrics, 2000 samples each side).
func BenchmarkCompare(b *testing.B) {
	c := NewCollector(Options{Start: t0})
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		c.Add(benchObservation(rng, t0.Add(time.Duration(i)*50*time.Millisecond), 0))
	}
	r := c.Snapshot()
	rec, err := MarshalRecord(r, nil, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	base, err := runrecord.LoadBaseline(rec)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		compare.Records(NewRecord(r, nil, nil, nil), base)
	}
}
