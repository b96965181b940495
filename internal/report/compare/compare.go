package compare

import (
	"hash/fnv"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/llmstream/xk6-llmstream/internal/quantile"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
)

const (
	bootstrapResamples = 1000
	bootstrapLevel     = 0.95
	// MinEffect: a change smaller than 5 % is "no significant change" even
	// when the interval excludes zero — it is not worth acting on.
	MinEffect = 0.05
	// minCompareSamples: fewer calls on either side make the interval meaningless.
	minCompareSamples = 30
)

// needCalls is the fewest calls on each side a verdict on the q-quantile
// needs: enough for the percentile's own distribution-free interval (72
// for a p95, 368 for a p99; below, the largest calls are all a p99 is, and
// two runs' largest calls differ by chance alone) and for the bootstrap.
func needCalls(q float64) int {
	return max(quantile.MinCalls(q, quantile.Confidence), minCompareSamples)
}

var compareStats = []struct { //nolint:gochecknoglobals // read-only table
	name string
	q    float64
}{{"p50", 0.5}, {"p95", 0.95}, {"p99", 0.99}}

// Records sets a run record against a baseline record: for every category
// both have, P50/P95/P99 of TTFT, E2E and TPOT with a bootstrap confidence
// interval of the difference, and how the two runs were made differently. It
// is the one comparison: a run is compared through its record (NewRecord),
// and a merged run is a record like any other. The bootstrap is seeded, so the
// same inputs give the same intervals. Without samples on either side the row
// has no interval and its verdict is "no significant change".
func Records(cur, base *runrecord.Record) *runrecord.Comparison {
	if cur == nil || base == nil {
		return nil
	}
	c := newComparison(base)
	c.Differences = runrecord.Differences(cur.Run, base.Run)
	if d := runrecord.InterruptionDifference(cur.Interrupted, base.Interrupted); d != "" {
		c.Differences = append(c.Differences, d)
	}
	c.Differences = append(c.Differences, ServerConfigDifferences(cur.Server, base.Server)...)
	c.Differences = append(c.Differences, ServerModelDifferences(cur.Server, base.Server)...)
	c.Server = Servers(cur.Server, base.Server)
	c.Capacity = Capacity(cur.Capacity, base.Capacity)
	c.Jobs = Jobs(cur.Conversations, base.Conversations)
	c.Confounded = Confounding(cur, base)
	seed := cur.Seed
	if seed == 0 {
		seed = recordCompareSeed
	}
	if len(cur.Clients) > 0 && len(base.Clients) > 0 {
		// Two providers or models in one run are compared each with itself:
		// merged, a faster client's calls would hide the other's regression.
		for _, name := range slices.Sorted(maps.Keys(cur.Clients)) {
			if bc := base.Clients[name]; bc != nil {
				compareCategories(c, name, cur.Clients[name].Categories, bc.Categories, seed)
			}
		}
		return c
	}
	compareCategories(c, "", cur.Categories, base.Categories, seed)
	return c
}

// compareCategories adds the rows of every category (not "all") of a run or
// of one client's part of it.
func compareCategories(c *runrecord.Comparison, client string, cur, base map[string]*runrecord.CategoryRecord, seed uint64) {
	for _, cat := range slices.Sorted(maps.Keys(cur)) {
		if cat == runrecord.AllCategories {
			continue
		}
		cr := cur[cat]
		n := len(c.Rows)
		compareCategory(c, cat, base[cat], seed, func(m record.Dist) ([]float64, *sketch.Sketch) {
			var s *sketch.Sketch
			if mr := cr.Metrics[m.String()]; mr != nil {
				s = mr.Sketch
			}
			return cr.Samples[m.String()], s
		})
		for i := n; i < len(c.Rows); i++ {
			c.Rows[i].Client = client
		}
	}
}

// recordCompareSeed seeds the bootstrap of a record read from a file (or
// merged): the same files always give the same intervals. A run's own record
// keeps the collector's seed.
const recordCompareSeed = 1

func newComparison(base *runrecord.Record) *runrecord.Comparison {
	return &runrecord.Comparison{BaselineStart: base.Start, BaselineMeta: base.Meta, Confidence: bootstrapLevel, Resamples: bootstrapResamples}
}

// compareCategory adds the rows of one category; current gives this run's
// sample and sketch of a metric.
func compareCategory(c *runrecord.Comparison, cat string, br *runrecord.CategoryRecord, seed uint64, current func(record.Dist) ([]float64, *sketch.Sketch)) {
	if br == nil {
		return
	}
	for _, m := range record.SampledDists {
		cur, sk := current(m)
		old := br.Samples[m.String()]
		mr := br.Metrics[m.String()]
		if mr == nil || sk == nil || sk.Count() == 0 {
			continue
		}
		withCI := len(cur) >= minCompareSamples && len(old) >= minCompareSamples
		var ci [][2]float64
		var curQ, oldQ []float64
		if withCI {
			ci, curQ, oldQ = bootstrapDiff(cur, old, seed, cat+"/"+m.String())
		}
		for i, st := range compareStats {
			row := runrecord.ComparisonRow{Category: cat, Metric: m.String(), Stat: st.name, Verdict: runrecord.VerdictSame,
				Calls: sk.Count(), BaselineCalls: mr.Count}
			if withCI {
				row.Current, row.Baseline = curQ[i], oldQ[i]
				row.HasCI, row.CILow, row.CIHigh = true, ci[i][0], ci[i][1]
			} else {
				row.Current = sk.Quantile(st.q)
				row.Baseline = map[string]float64{"p50": mr.P50, "p95": mr.P95, "p99": mr.P99}[st.name]
			}
			row.Delta = row.Current - row.Baseline
			row.DeltaPct = runrecord.FiniteOr0(row.Delta / row.Baseline)
			if need := needCalls(st.q); min(row.Calls, row.BaselineCalls) < uint64(need) /* #nosec G115 -- need is a positive count of calls */ {
				row.Verdict, row.NeedCalls = runrecord.VerdictTooFew, need
			} else if row.HasCI && math.Abs(row.DeltaPct) >= MinEffect {
				switch {
				case row.CILow > 0:
					row.Verdict = runrecord.VerdictWorse
				case row.CIHigh < 0:
					row.Verdict = runrecord.VerdictBetter
				}
			}
			c.Rows = append(c.Rows, row)
		}
	}
}

// bootstrapDiff resamples both samples with replacement and returns, for each
// compared percentile, the percentile interval of (current − baseline) and the
// point estimates. Resampling is done by counting how often each sorted value
// is drawn, so no resample is ever sorted: 1000 resamples of 2000 values take
// a few milliseconds.
func bootstrapDiff(cur, old []float64, seed uint64, name string) (ci [][2]float64, curQ, oldQ []float64) {
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	rng := rand.New(rand.NewPCG(seed, h.Sum64())) // #nosec G404 -- a seeded, reproducible resample: not a secret
	a := append([]float64(nil), cur...)
	b := append([]float64(nil), old...)
	sort.Float64s(a)
	sort.Float64s(b)
	curQ, oldQ = sortedQuantiles(a), sortedQuantiles(b)
	k := len(compareStats)
	diffs := make([][]float64, k)
	for i := range diffs {
		diffs[i] = make([]float64, 0, bootstrapResamples)
	}
	ca, cb := make([]int32, len(a)), make([]int32, len(b))
	qa, qb := make([]float64, k), make([]float64, k)
	for range bootstrapResamples {
		resampleQuantiles(a, ca, rng, qa)
		resampleQuantiles(b, cb, rng, qb)
		for i := range k {
			diffs[i] = append(diffs[i], qa[i]-qb[i])
		}
	}
	lo, hi := (1-bootstrapLevel)/2, 1-(1-bootstrapLevel)/2
	ci = make([][2]float64, k)
	for i := range k {
		sort.Float64s(diffs[i])
		ci[i] = [2]float64{diffs[i][int(lo*float64(len(diffs[i])-1))], diffs[i][int(math.Ceil(hi*float64(len(diffs[i])-1)))]}
	}
	return ci, curQ, oldQ
}

func sortedQuantiles(sorted []float64) []float64 {
	out := make([]float64, len(compareStats))
	for i, st := range compareStats {
		out[i] = sorted[int(st.q*float64(len(sorted)-1))]
	}
	return out
}

// resampleQuantiles draws len(sorted) values with replacement and writes the
// compared percentiles of the draw into out.
func resampleQuantiles(sorted []float64, counts []int32, rng *rand.Rand, out []float64) {
	n := len(sorted)
	clear(counts)
	for range n {
		counts[rng.IntN(n)]++
	}
	k := 0
	rank := int(compareStats[0].q * float64(n-1))
	seen := 0
	for j, c := range counts {
		seen += int(c)
		for k < len(compareStats) && seen > rank {
			out[k] = sorted[j]
			k++
			if k < len(compareStats) {
				rank = int(compareStats[k].q * float64(n-1))
			}
		}
		if k == len(compareStats) {
			return
		}
	}
}
