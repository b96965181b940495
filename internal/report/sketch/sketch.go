package sketch

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/DataDog/sketches-go/ddsketch"
	"github.com/DataDog/sketches-go/ddsketch/mapping"
	"github.com/DataDog/sketches-go/ddsketch/store"

	"github.com/llmstream/xk6-llmstream/internal/quantile"
)

// Sketch is a distribution kept as a DDSketch (github.com/DataDog/sketches-go):
// any quantile it returns is within a relative error alpha of a value that
// was really added, whatever the distribution. Two sketches with the same
// alpha merge exactly (bucket counts add), which is what lets per-stage,
// per-model and per-instance statistics be combined after the run without
// keeping the samples. Memory depends on the range of the values, never on how
// many were added, and is bounded: past maxBuckets the lowest buckets are
// folded together (the tail that matters for latency is the high one).
//
// Next to the sketch it keeps the exact count, sum, minimum and maximum, so
// means and extremes are not estimates.
//
// A Sketch is not safe for concurrent use; the Collector serialises access.
type Sketch struct {
	Alpha float64
	N     uint64
	Sum   float64
	Min   float64
	Max   float64

	dd     *ddsketch.DDSketch
	maxIdx float64 // dd's largest indexable value, kept to spare an interface call per Add
	// index and pos are dd's mapping and positive store as what they are
	// (nil if ever not): Add indexes a value and counts it there itself, as
	// dd.Add would after checks and three interface calls that a value
	// already in the indexable range does not need, for each of some
	// twenty values of every call.
	index *mapping.LogarithmicMapping
	pos   *store.CollapsingLowestDenseStore
}

const (
	// minIndexable is the smallest value that gets its own bucket. Durations are
	// kept in milliseconds, so this is one nanosecond: anything below is "zero"
	// (it also keeps one stray tiny value from stretching every bucket array).
	minIndexable = 1e-6
	// maxBuckets bounds a sketch even for absurd inputs.
	maxBuckets = 4096
	// FineAlpha is the accuracy of the per-group sketches the report quotes.
	FineAlpha = 0.01
	// CoarseAlpha is the accuracy of the per-second sketches, of which there are thousands.
	CoarseAlpha = 0.05
)

// New returns an empty sketch with relative accuracy alpha (0 < alpha < 1).
func New(alpha float64) *Sketch {
	dd, err := newDD(alpha)
	if err != nil {
		// Only the constants above reach here; a bad one is a programming error.
		panic(fmt.Sprintf("report: sketch accuracy %g: %v", alpha, err))
	}
	s := &Sketch{Alpha: alpha}
	s.bind(dd)
	return s
}

// bind makes dd s's buckets.
func (s *Sketch) bind(dd *ddsketch.DDSketch) {
	s.dd, s.maxIdx = dd, dd.MaxIndexableValue()
	s.index, _ = dd.IndexMapping.(*mapping.LogarithmicMapping)
	s.pos, _ = dd.GetPositiveValueStore().(*store.CollapsingLowestDenseStore)
}

func newDD(alpha float64) (*ddsketch.DDSketch, error) {
	return ddsketch.LogCollapsingLowestDenseDDSketch(alpha, maxBuckets)
}

func boundedStore() store.Store { return store.NewCollapsingLowestDenseStore(maxBuckets) }

// Add records one value. NaN and infinities are ignored: they are "not measured".
// Negative values count as zero.
func (s *Sketch) Add(v float64) {
	if v, ok := s.bucket(v); ok {
		s.addStats(v)
	}
}

// bucket counts v in its bucket, as Add takes it (ok false for NaN and
// infinities, which it leaves out), and returns the value Add counts.
func (s *Sketch) bucket(v float64) (float64, bool) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	v = max(v, 0)
	switch {
	case v <= minIndexable:
		_ = s.dd.AddWithCount(0, 1)
	case v > s.maxIdx:
		_ = s.dd.AddWithCount(s.maxIdx, 1)
	case s.index != nil && s.pos != nil:
		s.pos.Add(s.index.Index(v))
	default:
		_ = s.dd.Add(v) // cannot fail: v is in the indexable range
	}
	return v, true
}

func (s *Sketch) addStats(v float64) {
	if s.N == 0 || v < s.Min {
		s.Min = v
	}
	if s.N == 0 || v > s.Max {
		s.Max = v
	}
	s.N++
	s.Sum += v
}

// Merge adds every value of o into s. Both must have the same alpha.
func (s *Sketch) Merge(o *Sketch) error {
	if o == nil || o.N == 0 {
		return nil
	}
	if o.Alpha != s.Alpha {
		return fmt.Errorf("report: cannot merge sketches with accuracy %g and %g", s.Alpha, o.Alpha)
	}
	if err := s.dd.MergeWith(o.dd); err != nil {
		return fmt.Errorf("report: merging sketches: %w", err)
	}
	s.mergeStats(o.N, o.Sum, o.Min, o.Max)
	return nil
}

// MergeValues adds vs to s as Merge adds a sketch of them (New, then Add
// of each in order): the same buckets, and vs's count, sum, minimum and
// maximum taken whole, so s ends bit for bit as that merge leaves it (a
// sum of values added one by one could differ in its last bit). For a few
// values it spares the sketch that would be filled, merged and cleared.
func (s *Sketch) MergeValues(vs []float64) {
	var o Sketch
	for _, v := range vs {
		if v, ok := s.bucket(v); ok {
			o.addStats(v)
		}
	}
	if o.N > 0 {
		s.mergeStats(o.N, o.Sum, o.Min, o.Max)
	}
}

func (s *Sketch) mergeStats(n uint64, sum, lo, hi float64) {
	if s.N == 0 || lo < s.Min {
		s.Min = lo
	}
	if s.N == 0 || hi > s.Max {
		s.Max = hi
	}
	s.N += n
	s.Sum += sum
}

// Clone returns an independent copy.
func (s *Sketch) Clone() *Sketch {
	c := *s
	c.bind(s.dd.Copy())
	return &c
}

// Reset empties the sketch, keeping its allocated buckets for reuse.
func (s *Sketch) Reset() {
	s.dd.Clear()
	s.N, s.Sum, s.Min, s.Max = 0, 0, 0, 0
}

// Count is the number of values added.
func (s *Sketch) Count() uint64 { return s.N }

// Mean is the exact arithmetic mean (NaN when empty).
func (s *Sketch) Mean() float64 {
	if s.N == 0 {
		return math.NaN()
	}
	return s.Sum / float64(s.N)
}

// Quantile returns the q-quantile (0 ≤ q ≤ 1) within relative error alpha,
// NaN when the sketch is empty. The extremes (q 0 and 1) are exact, and no
// answer falls outside them.
func (s *Sketch) Quantile(q float64) float64 {
	switch {
	case s.N == 0 || math.IsNaN(q):
		return math.NaN()
	case q <= 0:
		return s.Min
	case q >= 1:
		return s.Max
	}
	v, err := s.dd.GetValueAtQuantile(q)
	if err != nil {
		return math.NaN()
	}
	return math.Max(s.Min, math.Min(s.Max, v))
}

// FractionBelow estimates the share of values ≤ v (bucket resolution).
func (s *Sketch) FractionBelow(v float64) float64 {
	if s.N == 0 {
		return math.NaN()
	}
	below := s.dd.GetZeroCount()
	if v > minIndexable {
		top := s.dd.Index(v)
		s.dd.GetPositiveValueStore().ForEach(func(i int, c float64) bool {
			if i <= top {
				below += c
			}
			return false
		})
	}
	return below / float64(s.N)
}

// Bins calls fn for every non-empty bucket in increasing order with the
// bucket's lower edge, upper edge and count (the zero bucket first, as [0,0]).
func (s *Sketch) Bins(fn func(lo, hi float64, count uint64)) {
	if z := s.dd.GetZeroCount(); z > 0 {
		fn(0, 0, uint64(z))
	}
	type bin struct {
		i int
		c float64
	}
	var bins []bin
	s.dd.GetPositiveValueStore().ForEach(func(i int, c float64) bool {
		if c > 0 {
			bins = append(bins, bin{i, c})
		}
		return false
	})
	sort.Slice(bins, func(a, b int) bool { return bins[a].i < bins[b].i })
	for _, b := range bins {
		fn(s.dd.LowerBound(b.i), s.dd.LowerBound(b.i+1), uint64(b.c))
	}
}

// buckets is how many buckets hold values (the zero bucket included).
func (s *Sketch) buckets() int {
	n := 0
	if s.dd.GetZeroCount() > 0 {
		n++
	}
	s.dd.GetPositiveValueStore().ForEach(func(_ int, c float64) bool {
		if c > 0 {
			n++
		}
		return false
	})
	return n
}

// sketchJSON is how a sketch is stored in a run record: the exact statistics
// in plain JSON and the buckets in sketches-go's own binary encoding (index
// mapping included), base64, so any DDSketch implementation can read them.
type sketchJSON struct {
	Alpha    float64 `json:"alpha"`
	N        uint64  `json:"n"`
	Sum      float64 `json:"sum"`
	Min      float64 `json:"min"`
	Max      float64 `json:"max"`
	DDSketch string  `json:"ddsketch"`
}

// MarshalJSON implements json.Marshaler.
func (s *Sketch) MarshalJSON() ([]byte, error) {
	var enc []byte
	s.dd.Encode(&enc, false)
	return json.Marshal(sketchJSON{
		Alpha: s.Alpha, N: s.N, Sum: s.Sum, Min: s.Min, Max: s.Max,
		DDSketch: base64.StdEncoding.EncodeToString(enc),
	})
}

// UnmarshalJSON implements json.Unmarshaler; it checks what it reads, so a
// corrupt record gives an error, never a sketch that answers nonsense.
func (s *Sketch) UnmarshalJSON(b []byte) error {
	var j sketchJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	if !(j.Alpha > 0 && j.Alpha < 1) {
		return fmt.Errorf("sketch accuracy %g out of (0,1)", j.Alpha)
	}
	raw, err := base64.StdEncoding.DecodeString(j.DDSketch)
	if err != nil {
		return fmt.Errorf("sketch buckets: %w", err)
	}
	dd, err := decodeDD(raw)
	if err != nil {
		return fmt.Errorf("sketch buckets: %w", err)
	}
	want, _ := mapping.NewLogarithmicMapping(j.Alpha)
	if !dd.IndexMapping.Equals(want) {
		return fmt.Errorf("sketch buckets are not a logarithmic mapping of accuracy %g", j.Alpha)
	}
	*s = Sketch{Alpha: j.Alpha, N: j.N, Sum: j.Sum, Min: j.Min, Max: j.Max}
	s.bind(dd)
	return s.Validate()
}

// decodeDD reads sketches-go's encoding into bounded stores. The decoder is
// not written for hostile input, so a panic in it becomes an error.
func decodeDD(raw []byte) (dd *ddsketch.DDSketch, err error) {
	defer func() {
		if p := recover(); p != nil {
			dd, err = nil, fmt.Errorf("undecodable (%v)", p)
		}
	}()
	return ddsketch.DecodeDDSketch(raw, boundedStore, nil)
}

// Validate checks a sketch read from a record: the buckets hold exactly the
// stated count, whole counts only, no negative values, and the extremes agree.
func (s *Sketch) Validate() error {
	if s.dd == nil {
		return errors.New("sketch has no buckets")
	}
	if !s.dd.GetNegativeValueStore().IsEmpty() {
		return errors.New("sketch has negative values")
	}
	total := s.dd.GetCount()
	if total != math.Trunc(total) || total != float64(s.N) {
		return fmt.Errorf("sketch counts add up to %g, not n=%d", total, s.N)
	}
	if s.N > 0 && (!finite(s.Sum) || !finite(s.Min) || !finite(s.Max) || s.Min < 0 || s.Min > s.Max) {
		return fmt.Errorf("sketch statistics are inconsistent (min %g, max %g, sum %g)", s.Min, s.Max, s.Sum)
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Interval is the distribution-free interval of the p-quantile at conf
// (quantile.TwoSided) read from the sketch: the values at the interval's
// ranks, each widened by the sketch's relative error. A returned value v̂
// is within alpha of the call x it stands for (|v̂ − x| ≤ alpha·x), so x
// lies in [v̂/(1+alpha), v̂/(1−alpha)]; the exact minimum and maximum cap
// the ends, and a rank that is the first or last call is read exactly.
// Merged sketches keep alpha, so a merged record's intervals hold the same way.
func (s *Sketch) Interval(p, conf float64) quantile.Bounds {
	b := quantile.Unknown(p, conf)
	if s == nil || s.N == 0 {
		return b
	}
	n := int(min(s.N, uint64(math.MaxInt32)))
	iv := quantile.TwoSided(n, p, conf)
	b.Calls = n
	if iv.BoundedBelow() {
		b.Lo = math.Max(s.Min, s.Quantile(quantile.RankQuantile(iv.Lo, n))/(1+s.Alpha))
	}
	if iv.BoundedAbove() {
		b.Hi = math.Min(s.Max, s.Quantile(quantile.RankQuantile(iv.Hi, n))/(1-s.Alpha))
	}
	return b
}
