package report

import (
	"fmt"
	"math"
	"sort"

	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/compare"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// A paired comparison answers the shadow-traffic and model-routing question:
// the same prompt sent to two clients, which answers faster? Pairing by
// dataset item removes the prompt from the comparison (a long prompt is slow
// on both), so the median of per-item differences needs far fewer calls than
// comparing two unpaired distributions.

const (
	pairPendingMax = 10000 // unmatched calls kept waiting for their other half
	pairKeep       = 4000  // pairs kept per pair of clients (uniform sample beyond)
	pairMin        = 10    // fewer pairs give no verdict
	pairZ          = 1.96  // 95 % interval of the median difference
)

// pairMetrics are the figures compared per pair: TTFT and E2E (lower is
// better) and tokens/s (higher is better).
var pairMetrics = []struct { //nolint:gochecknoglobals // read-only table
	dist         record.Dist
	higherBetter bool
}{{record.DistTTFT, false}, {record.DistE2E, false}, {record.DistTokensPerSec, true}}

type pairValues [3]float64 // per pairMetrics; NaN when not measured

// valuesOf is what o's rows keep of each pairMetrics figure.
func valuesOf(o *Observation) pairValues {
	var v pairValues
	for i, pm := range pairMetrics {
		v[i] = math.NaN()
		if x, ok := pm.dist.Row().Kept(o); ok {
			v[i] = x
		}
	}
	return v
}

type pendingCall struct {
	item, client string
	v            pairValues
}

type pairKey struct{ A, B string }

// pairer matches calls of one dataset item made by different clients.
type pairer struct {
	pending map[string][]pendingCall // by item id, at most one per client
	order   []string                 // item ids in arrival order, for eviction
	pairs   map[pairKey]*pairSample
}

type pairSample struct {
	seen uint64
	a, b []pairValues
	rng  uint64 // xorshift state for the uniform sample
}

func newPairer() *pairer {
	return &pairer{pending: map[string][]pendingCall{}, pairs: map[pairKey]*pairSample{}}
}

func (p *pairer) add(o *Observation) {
	v := valuesOf(o)
	waiting := p.pending[o.ItemID]
	for i, w := range waiting {
		if w.client == o.Name {
			continue
		}
		p.pending[o.ItemID] = append(waiting[:i], waiting[i+1:]...)
		if len(p.pending[o.ItemID]) == 0 {
			delete(p.pending, o.ItemID)
		}
		key, a, b := pairKey{w.client, o.Name}, w.v, v
		if key.B < key.A {
			key, a, b = pairKey{o.Name, w.client}, v, w.v
		}
		p.record(key, a, b)
		return
	}
	for i, w := range waiting {
		if w.client == o.Name { // a newer call of the same client replaces the unmatched one
			waiting[i].v = v
			return
		}
	}
	p.pending[o.ItemID] = append(waiting, pendingCall{item: o.ItemID, client: o.Name, v: v})
	p.order = append(p.order, o.ItemID)
	for len(p.pending) > pairPendingMax && len(p.order) > 0 {
		delete(p.pending, p.order[0])
		p.order = p.order[1:]
	}
	if len(p.order) > 4*pairPendingMax { // ids already matched or evicted
		live := p.order[:0]
		for _, id := range p.order {
			if p.pending[id] != nil {
				live = append(live, id)
			}
		}
		p.order = live
	}
}

func (p *pairer) record(key pairKey, a, b pairValues) {
	s := p.pairs[key]
	if s == nil {
		s = &pairSample{rng: 0x9E3779B97F4A7C15}
		p.pairs[key] = s
	}
	s.seen++
	if len(s.a) < pairKeep {
		s.a, s.b = append(s.a, a), append(s.b, b)
		return
	}
	s.rng ^= s.rng << 13
	s.rng ^= s.rng >> 7
	s.rng ^= s.rng << 17
	if j := s.rng % s.seen; j < pairKeep {
		s.a[j], s.b[j] = a, b
	}
}

func (p *pairer) snapshot() []runrecord.PairedComparison {
	keys := make([]pairKey, 0, len(p.pairs))
	for k := range p.pairs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].A < keys[j].A || keys[i].A == keys[j].A && keys[i].B < keys[j].B })
	var out []runrecord.PairedComparison
	for _, k := range keys {
		s := p.pairs[k]
		pc := runrecord.PairedComparison{A: k.A, B: k.B, Pairs: s.seen}
		for m, pm := range pairMetrics {
			pc.Rows = append(pc.Rows, pairedRow(pm.dist.String(), pm.higherBetter, k, s, m))
		}
		out = append(out, pc)
	}
	return out
}

func pairedRow(metric string, higherBetter bool, k pairKey, s *pairSample, m int) runrecord.PairedRow {
	var a, b, d []float64
	for i := range s.a {
		x, y := s.a[i][m], s.b[i][m]
		if math.IsNaN(x) || math.IsNaN(y) {
			continue
		}
		a, b, d = append(a, x), append(b, y), append(d, y-x)
	}
	row := runrecord.PairedRow{Metric: metric, Pairs: len(d), Verdict: "too few pairs"}
	if len(d) < pairMin {
		return row
	}
	row.MedianA, row.MedianB = median(a), median(b)
	sort.Float64s(d)
	n := len(d)
	row.MedianDiff = median(d)
	// Distribution-free interval of the median (sign test): the order
	// statistics whose ranks bound the median's with 95 % probability.
	j := max(0, int(math.Floor((float64(n)-pairZ*math.Sqrt(float64(n)))/2)))
	row.CILow, row.CIHigh = d[j], d[n-1-j]
	row.RelDiff = runrecord.FiniteOr0(row.MedianDiff / row.MedianA)
	row.Verdict = "no significant difference"
	if math.Abs(row.RelDiff) >= compare.MinEffect && (row.CILow > 0 || row.CIHigh < 0) {
		better := row.CIHigh < 0 // B lower
		if higherBetter {
			better = !better
		}
		word := map[bool]string{true: "better", false: "worse"}[better]
		row.Verdict = fmt.Sprintf("%s is %s", k.B, word)
	}
	return row
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Paired returns the paired comparisons of the run (clients that served the same dataset items).
func (r *Run) Paired() []runrecord.PairedComparison { return r.pairs }
