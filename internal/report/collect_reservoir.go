package report

import (
	"hash/fnv"
	"math/rand/v2"

	"github.com/llmstream/xk6-llmstream/internal/record"
)

// Sample is one call kept for the bootstrap and for correlations (E2E
// against output length).
type Sample struct {
	TTFT, E2E, TPOT KeptMS
	OutputTokens    int64
}

// KeptMS is one figure of a kept call, ms, or none: not measured or, for a
// failed call, a figure its row does not count (record.AnswersOnly). A
// flag, not a sentinel value: no figure can be mistaken for one.
type KeptMS struct {
	ms    float64
	known bool
}

// MS is the figure and whether the call has it.
func (k KeptMS) MS() (float64, bool) { return k.ms, k.known }

// reservoir keeps a uniform random sample of bounded size of everything it is
// offered (Vitter's algorithm R), so the baseline comparison can resample
// real values while memory stays fixed however long the run is.
type reservoir struct {
	Seen  uint64
	Items []Sample
	size  int
	src   *rand.PCG
	rng   *rand.Rand
}

func newReservoir(size int, seed uint64, name string) *reservoir {
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	src := rand.NewPCG(seed, h.Sum64())
	return &reservoir{size: size, src: src, rng: rand.New(src)} // #nosec G404 -- a seeded, reproducible sample: not a secret
}

func (r *reservoir) clone() *reservoir {
	c := *r
	c.Items = append([]Sample(nil), r.Items...)
	src := *r.src
	c.src = &src
	c.rng = rand.New(c.src) // #nosec G404 -- a seeded, reproducible sample: not a secret
	return &c
}

func (r *reservoir) offer(s Sample) {
	r.Seen++
	if len(r.Items) < r.size {
		r.Items = append(r.Items, s)
		return
	}
	if j := r.rng.Uint64N(r.Seen); j < uint64(r.size) { // #nosec G115 -- size ≤ len(r.Items) here: not negative
		r.Items[j] = s
	}
}

// sampleOf is what the reservoir keeps of o: each figure as its row counts
// it; false when o has none of them (a call that failed before its first
// token).
func sampleOf(o *Observation) (Sample, bool) {
	s := Sample{TTFT: kept(rowTTFT, o), E2E: kept(rowE2E, o),
		TPOT: kept(rowTPOT, o), OutputTokens: o.OutputTokens}
	return s, s.TTFT.known || s.E2E.known || s.TPOT.known
}

func kept(row *record.Figure[record.Call], o *Observation) KeptMS {
	v, ok := row.Kept(o)
	return KeptMS{ms: v, known: ok}
}

// values extracts one metric, leaving out calls where it was not measured.
func samplesOf(items []Sample, m record.Dist) []float64 {
	out := make([]float64, 0, len(items))
	for _, s := range items {
		var v KeptMS
		switch m {
		case record.DistTTFT:
			v = s.TTFT
		case record.DistE2E:
			v = s.E2E
		case record.DistTPOT:
			v = s.TPOT
		default:
			return nil
		}
		if ms, ok := v.MS(); ok {
			out = append(out, ms)
		}
	}
	return out
}
