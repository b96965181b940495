package sketch

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
		s := New(alpha)
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
	a, b, all := New(FineAlpha), New(FineAlpha), New(FineAlpha)
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
	if a.N != all.N || a.dd.GetZeroCount() != all.dd.GetZeroCount() || math.Abs(a.Sum-all.Sum) > 1e-6 ||
		a.Min != all.Min || a.Max != all.Max {
		t.Errorf("merged stats differ: %+v vs %+v", a.N, all.N)
	}
	if err := a.Merge(New(CoarseAlpha)); err != nil {
		t.Errorf("merging an empty sketch of other accuracy should be a no-op: %v", err)
	}
	c := New(CoarseAlpha)
	c.Add(1)
	if err := a.Merge(c); err == nil {
		t.Error("merging sketches of different accuracy must fail")
	}
}

func TestSketchEmptyAndBadValues(t *testing.T) {
	s := New(FineAlpha)
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
	s := New(FineAlpha)
	rng := rand.New(rand.NewPCG(5, 6))
	for range 200000 {
		s.Add(10 + rng.Float64()*990) // 10 ms .. 1 s
	}
	// ln(100)/ln(gamma) ≈ 231 buckets for two decades at 1%.
	if n := s.buckets(); n > 260 {
		t.Fatalf("%d buckets for two decades of values", n)
	}
	s.Add(1e300)
	s.Add(1e-300 + 2e-6)
	s.Add(math.MaxFloat64)
	if n := s.buckets(); n > maxBuckets {
		t.Fatalf("bucket bound broken: %d", n)
	}
	if s.Count() != 200003 || s.Max != math.MaxFloat64 || s.Quantile(1) != math.MaxFloat64 {
		t.Fatalf("extremes must stay exact: n %d max %g q1 %g", s.Count(), s.Max, s.Quantile(1))
	}
}

func TestSketchJSONRoundTrip(t *testing.T) {
	s := New(FineAlpha)
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
	for _, q := range []float64{0, 0.5, 0.95, 1} {
		if back.Quantile(q) != s.Quantile(q) {
			t.Fatalf("round trip changed q%g: %g vs %g", q, back.Quantile(q), s.Quantile(q))
		}
	}
	if back.N != s.N || back.Sum != s.Sum || back.Min != s.Min || back.Max != s.Max || back.Alpha != s.Alpha {
		t.Fatalf("round trip changed the exact statistics: %+v vs %+v", back, s)
	}
	back.N++
	if back.Validate() == nil {
		t.Fatal("inconsistent counts must be rejected")
	}
	for _, bad := range []string{
		`{"alpha":0.01,"n":1,"sum":1,"min":1,"max":1,"ddsketch":"!!"}`,                                      // not base64
		`{"alpha":0.01,"n":1,"sum":1,"min":1,"max":1,"ddsketch":"AQID"}`,                                    // not a sketch
		`{"alpha":0.05,"n":100,"sum":1,"min":1,"max":100,"ddsketch":"` + jsonField(t, b, "ddsketch") + `"}`, // other accuracy
		`{"alpha":0.01,"n":7,"sum":1,"min":1,"max":100,"ddsketch":"` + jsonField(t, b, "ddsketch") + `"}`,   // other count
		`{"alpha":2,"n":0,"ddsketch":""}`,
	} {
		var x Sketch
		if err := json.Unmarshal([]byte(bad), &x); err == nil {
			t.Errorf("accepted a corrupt sketch: %s", bad)
		}
	}
}

func TestSketchFractionBelow(t *testing.T) {
	s := New(FineAlpha)
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

func jsonField(t *testing.T, b []byte, name string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m[name].(string)
}

// The guarantee the report relies on, checked against exact order statistics
// on shapes latency really has: a narrow peak, two modes, a heavy tail, and
// many exact zeros (gaps of tokens delivered in one read).
func TestSketchQuantilesOnLatencyShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	shapes := map[string]func() float64{
		"narrow":  func() float64 { return 200 + rng.NormFloat64() },
		"bimodal": func() float64 { return []float64{30, 900}[rng.IntN(2)] * math.Exp(rng.NormFloat64()*0.1) },
		"pareto":  func() float64 { return 5 / math.Pow(1-rng.Float64(), 1/1.2) },
		"zeros":   func() float64 { return float64(rng.IntN(3)) * rng.ExpFloat64() * 20 },
	}
	for name, gen := range shapes {
		s := New(FineAlpha)
		vals := make([]float64, 50000)
		for i := range vals {
			vals[i] = gen()
			s.Add(vals[i])
		}
		sort.Float64s(vals)
		for _, q := range []float64{0.001, 0.1, 0.5, 0.9, 0.99, 0.999} {
			want, got := exactQuantile(vals, q), s.Quantile(q)
			if want == 0 {
				if got != 0 {
					t.Errorf("%s q%g: got %g, want 0", name, q, got)
				}
				continue
			}
			if rel := math.Abs(got-want) / want; rel > FineAlpha+1e-9 {
				t.Errorf("%s q%g: got %g want %g (rel err %.4f > %g)", name, q, got, want, rel, FineAlpha)
			}
		}
	}
}

func TestSketchBinsAreOrderedAndCountEverything(t *testing.T) {
	s := New(FineAlpha)
	for _, v := range []float64{500, 0, 3, 3, 70, 0.5, 500} {
		s.Add(v)
	}
	var total uint64
	lastHi := -1.0
	s.Bins(func(lo, hi float64, c uint64) {
		if lo < lastHi || hi < lo {
			t.Errorf("bins out of order: [%g,%g] after %g", lo, hi, lastHi)
		}
		lastHi = hi
		total += c
	})
	if total != s.Count() {
		t.Fatalf("bins hold %d values, sketch %d", total, s.Count())
	}
}

// MergeValues leaves a sketch exactly as merging a sketch of the same
// values does, bit for bit (buckets, count, sum, extremes), whatever the
// values: zero, tiny, negative, huge, NaN and infinities among them, into
// an empty sketch or one that already holds values.
func TestSketchMergeValuesIsMergeOfTheirSketch(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	odd := []float64{0, 1e-9, -3, math.NaN(), math.Inf(1), math.Inf(-1), 1e300, 0.1, 0.2, 0.3}
	for _, alpha := range []float64{FineAlpha, CoarseAlpha} {
		viaMerge, viaValues := New(alpha), New(alpha)
		for call := range 500 {
			vs := make([]float64, rng.IntN(17))
			for i := range vs {
				vs[i] = rng.ExpFloat64() * 40
				if rng.IntN(8) == 0 {
					vs[i] = odd[rng.IntN(len(odd))]
				}
			}
			of := New(alpha)
			for _, v := range vs {
				of.Add(v)
			}
			if err := viaMerge.Merge(of); err != nil {
				t.Fatal(err)
			}
			viaValues.MergeValues(vs)
			a, err := json.Marshal(viaMerge)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(viaValues)
			if err != nil {
				t.Fatal(err)
			}
			if string(a) != string(b) {
				t.Fatalf("alpha %g, call %d (%v): merged %s, values %s", alpha, call, vs, a, b)
			}
		}
		if viaValues.N == 0 {
			t.Fatal("no value was kept")
		}
	}
}

// Add counts a value in the bucket sketches-go's own Add counts it in,
// in a new sketch, a clone and one read back from JSON alike: the
// encoded buckets are those of a DDSketch fed the same values its way.
func TestSketchAddBucketsAsDDSketch(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, alpha := range []float64{FineAlpha, CoarseAlpha} {
		s := New(alpha)
		want, err := newDD(alpha)
		if err != nil {
			t.Fatal(err)
		}
		add := func(v float64) {
			s.Add(v)
			switch { // as sketches-go takes what Add passes it
			case v <= minIndexable:
				_ = want.AddWithCount(0, 1)
			case v > s.maxIdx:
				_ = want.AddWithCount(s.maxIdx, 1)
			default:
				_ = want.Add(v)
			}
		}
		for i := range 3000 {
			add(math.Exp(rng.NormFloat64()*4 + 2))
			switch i {
			case 1000:
				s = s.Clone()
			case 2000:
				b, err := json.Marshal(s)
				if err != nil {
					t.Fatal(err)
				}
				s = &Sketch{}
				if err := json.Unmarshal(b, s); err != nil {
					t.Fatal(err)
				}
			}
		}
		add(0)
		add(1e-12)
		add(1e9) // beyond, the buckets would fold into one (maxBuckets) and hide any difference
		var got, exp []byte
		s.dd.Encode(&got, false)
		want.Encode(&exp, false)
		if string(got) != string(exp) {
			t.Fatalf("alpha %g: the buckets differ from sketches-go's own", alpha)
		}
	}
}

// BenchmarkSketchAdd is one value added, as the report adds some twenty per
// call: a latency in ms, of a few hundred distinct ones.
func BenchmarkSketchAdd(b *testing.B) {
	rng := rand.New(rand.NewPCG(11, 12))
	vs := make([]float64, 256)
	for i := range vs {
		vs[i] = math.Exp(rng.NormFloat64() + 4)
	}
	s := New(FineAlpha)
	b.ResetTimer()
	for i := range b.N {
		s.Add(vs[i%len(vs)])
	}
}
