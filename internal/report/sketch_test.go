package report

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

func exactQuantile(sorted []float64, q float64) float64 {
	return sorted[int(q*float64(len(sorted)-1))]
}

func TestSketchQuantilesWithinRelativeError(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, alpha := range []float64{FineAlpha, CoarseAlpha} {
		s := NewSketch(alpha)
		var vals []float64
		for range 20000 {
			v := math.Exp(rng.NormFloat64()*1.5 + 5) // lognormal: spans several decades
			vals = append(vals, v)
			s.Add(v)
		}
		sort.Float64s(vals)
		for _, q := range []float64{0, 0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 1} {
			want := exactQuantile(vals, q)
			got := s.Quantile(q)
			if rel := math.Abs(got-want) / want; rel > alpha+1e-9 {
				t.Errorf("alpha %g q %g: got %g want %g (rel err %g)", alpha, q, got, want, rel)
			}
		}
	}
}

func TestSketchMergeEqualsSingleSketch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	a, b, all := NewSketch(FineAlpha), NewSketch(FineAlpha), NewSketch(FineAlpha)
	for i := range 5000 {
		v := rng.ExpFloat64() * 100
		if i%3 == 0 {
			v = 0 // exercise the zero bucket
		}
		all.Add(v)
		if i%2 == 0 {
			a.Add(v)
		} else {
			b.Add(v * 1) // same values split across two sketches
		}
	}
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	for _, q := range []float64{0.1, 0.5, 0.99} {
		if a.Quantile(q) != all.Quantile(q) {
			t.Errorf("q %g: merged %g, single %g", q, a.Quantile(q), all.Quantile(q))
		}
	}
	if a.N != all.N || a.Zero != all.Zero || math.Abs(a.Sum-all.Sum) > 1e-6 {
		t.Errorf("merged stats differ: %+v vs %+v", a.N, all.N)
	}
	if err := a.Merge(NewSketch(CoarseAlpha)); err != nil {
		t.Errorf("merging an empty sketch of other accuracy should be a no-op: %v", err)
	}
	c := NewSketch(CoarseAlpha)
	c.Add(1)
	if err := a.Merge(c); err == nil {
		t.Error("merging sketches of different accuracy must fail")
	}
}

func TestSketchEmptyAndBadValues(t *testing.T) {
	s := NewSketch(FineAlpha)
	if !math.IsNaN(s.Quantile(0.5)) || !math.IsNaN(s.Mean()) {
		t.Fatal("empty sketch must answer NaN")
	}
	s.Add(math.NaN())
	s.Add(math.Inf(1))
	if s.Count() != 0 {
		t.Fatal("NaN and Inf must be ignored")
	}
	s.Add(-5)
	if s.Quantile(0.5) != 0 {
		t.Fatalf("negative value should count as zero, got %g", s.Quantile(0.5))
	}
}

func TestSketchMemoryIsBoundedByRangeNotCount(t *testing.T) {
	s := NewSketch(FineAlpha)
	rng := rand.New(rand.NewPCG(5, 6))
	for range 200000 {
		s.Add(10 + rng.Float64()*990) // 10 ms .. 1 s
	}
	// ln(100)/ln(gamma) ≈ 231 buckets for two decades at 1%.
	if len(s.Counts) > 260 {
		t.Fatalf("%d buckets for two decades of values", len(s.Counts))
	}
	s.Add(1e300)
	s.Add(1e-300 + 2e-6)
	if len(s.Counts) > maxBuckets {
		t.Fatalf("bucket bound broken: %d", len(s.Counts))
	}
}

func TestSketchJSONRoundTrip(t *testing.T) {
	s := NewSketch(FineAlpha)
	for i := 1; i <= 100; i++ {
		s.Add(float64(i))
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Sketch
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if err := back.validate(); err != nil {
		t.Fatal(err)
	}
	if back.Quantile(0.95) != s.Quantile(0.95) {
		t.Fatalf("round trip changed P95: %g vs %g", back.Quantile(0.95), s.Quantile(0.95))
	}
	back.N++
	if back.validate() == nil {
		t.Fatal("inconsistent counts must be rejected")
	}
}

func TestSketchFractionBelow(t *testing.T) {
	s := NewSketch(FineAlpha)
	for i := range 100 {
		if i < 40 {
			s.Add(0)
		} else {
			s.Add(100)
		}
	}
	if f := s.FractionBelow(1); math.Abs(f-0.4) > 1e-9 {
		t.Fatalf("FractionBelow(1) = %g, want 0.4", f)
	}
	if f := s.FractionBelow(1000); f != 1 {
		t.Fatalf("FractionBelow(1000) = %g, want 1", f)
	}
}
