package capacity

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/quantile"
)

// Confidence is the confidence of every verdict: a window passes an
// objective when the objective holds with at least this probability, and
// fails it when it is broken with at least this probability; in between the
// calls cannot tell, and the window goes on.
const Confidence = 0.95

// Objective verdicts.
const (
	verdictPass      = "pass"
	verdictFail      = "fail"
	verdictUndecided = "undecided"
)

// bound is an objective judged on a window's calls: its figure and the
// one-sided 95 % bounds that decide it.
type bound struct {
	verdict string
	// observed is the figure read from the calls (NaN: not measured); lower
	// and upper bound the true figure at Confidence (NaN: the calls cannot
	// bound that side; upper +Inf: the bound is a call still unfinished).
	observed, lower, upper float64
	calls, censored        int
	// leansPass says the share of calls past the limit is under the share
	// a pass allows (the limit's tail: 5 % for a p95, the error rate's
	// limit), each call still in flight counted past it: more calls like
	// these could pass the objective.
	leansPass bool
}

// value is one call's figure as the verdict knows it: exact, or (censored)
// only a lower bound, lo (0 when nothing is known of it).
type value struct {
	v     float64
	exact bool
}

// durationValue is a call's TTFT, TPOT or E2E for o, ms; ok is false when
// the call does not count for o (another client's, or an answer with no
// such figure, like the TPOT of one token).
//
// A call still in flight has run for its age: its E2E is at least that,
// but its TTFT and TPOT are unknown (the search hears of a call when it
// ends, not of its first token). A failed call never completed, so its E2E
// is at least its duration; its TTFT, if no token came, is at least its
// duration too. Such calls are censored: never left out, which would keep
// the fast ones, and never taken as within a limit they may have broken.
func durationValue(o Objective, j judgedCall) (value, bool) {
	if j.f == nil {
		if o.Figure == FigureE2E {
			return value{v: measure.MS(j.age)}, true
		}
		return value{}, true
	}
	if o.Client != "" && j.f.client != o.Client {
		return value{}, false
	}
	d, measured := figureOf(o.Figure, j.f).MS()
	switch {
	case measured && (j.f.ok || o.Figure == FigureTTFT):
		return value{v: d, exact: true}, true
	case j.f.ok: // not measured: a one-token answer's TPOT, a TTFT not streamed
		return value{}, false
	case o.Figure == FigureTPOT:
		return value{}, true
	default:
		return value{v: measure.MS(max(j.f.e2e.Or(0), 0))}, true
	}
}

func figureOf(figure string, f *finished) measure.Duration {
	switch figure {
	case FigureTTFT:
		return f.ttft
	case FigureTPOT:
		return f.tpot
	default:
		return f.e2e
	}
}

// judgeDuration bounds the o.Quantile of the calls' figure with their
// order statistics (quantile.Upper and quantile.Lower: distribution-free),
// each censored call taken at +∞ for the upper bound and at its lower
// bound for the lower one, so both stay conservative. The ranks are those
// of the effective sample: calls that queue together are not independent,
// so the sample shrinks by the clustering its calls past the limit show,
// and at least by burst, the arrivals' Burstiness (a window of bursty
// arrivals may show no burst's queue yet: its calls are not independent
// all the same).
func judgeDuration(o Objective, calls []judgedCall, burst float64) bound {
	var ups, los []float64 // in the order the calls were sent
	b := bound{observed: math.NaN(), lower: math.NaN(), upper: math.NaN()}
	var seen []float64 // exact values and real lower bounds, for the figure read
	for _, j := range calls {
		v, ok := durationValue(o, j)
		if !ok {
			continue
		}
		b.calls++
		los = append(los, v.v)
		if v.exact {
			ups = append(ups, v.v)
			seen = append(seen, v.v)
			continue
		}
		b.censored++
		ups = append(ups, math.Inf(1))
		if v.v > 0 {
			seen = append(seen, v.v)
		}
	}
	n := b.calls
	if n == 0 {
		b.verdict = verdictUndecided
		return b
	}
	if len(seen) > 0 {
		slices.Sort(seen)
		b.observed = seen[min(max(int(math.Ceil(o.Quantile*float64(len(seen))))-1, 0), len(seen)-1)]
	}
	past := func(v float64) bool { return v > o.Limit }
	upVIF := max(inflation(ups, past), burst)
	loVIF := max(inflation(los, past), burst)
	b.leansPass = float64(countIf(ups, past)) < (1-o.Quantile)*float64(n)
	slices.Sort(ups)
	slices.Sort(los)
	if r := upperRank(n, o.Quantile, upVIF); r <= n {
		b.upper = ups[r-1]
	}
	if r := lowerRank(n, o.Quantile, loVIF); r >= 1 {
		b.lower = los[r-1]
	}
	switch {
	case b.upper <= o.Limit:
		b.verdict = verdictPass
	case b.lower > o.Limit:
		b.verdict = verdictFail
	default:
		b.verdict = verdictUndecided
	}
	return b
}

// upperRank is the rank (1-based) of n calls whose value bounds the
// p-quantile from above at Confidence, when the calls count as n / vif
// independent ones: the effective sample's rank, scaled back. n+1: none.
func upperRank(n int, p, vif float64) int {
	eff := int(float64(n) / vif)
	hi := quantile.Upper(eff, p, Confidence).Hi
	if hi > eff {
		return n + 1
	}
	return min(int(math.Ceil(float64(hi)*vif)), n)
}

// lowerRank is the rank bounding the p-quantile from below (0: none).
func lowerRank(n int, p, vif float64) int {
	eff := int(float64(n) / vif)
	lo := quantile.Lower(eff, p, Confidence).Lo
	if lo < 1 {
		return 0
	}
	return min(int(math.Ceil(float64(lo)*vif)), n)
}

// countIf counts the values f holds for.
func countIf(vals []float64, f func(float64) bool) int {
	n := 0
	for _, v := range vals {
		if f(v) {
			n++
		}
	}
	return n
}

// clusterGap is how many calls within the limit may separate two calls
// past it that still belong to one cluster.
const clusterGap = 3

// inflation is how much the count of calls past a limit varies beyond a
// binomial's, estimated from how they cluster in the order the calls were
// sent: calls past the limit come in runs (a burst of arrivals queues
// several calls in a row), and a run is one event, not several. With runs
// of sizes S, the count of such calls is compound-Poisson-like, its
// variance Σ S² / Σ S times a binomial's; the calls then count as that
// many times fewer independent ones. 1 when none is past (or they come
// one at a time).
func inflation(vals []float64, past func(float64) bool) float64 {
	var k, ss, run int
	gap := clusterGap + 1
	for _, v := range vals {
		if !past(v) {
			gap++
			continue
		}
		if gap > clusterGap {
			ss += run * run
			run = 0
		}
		run++
		k++
		gap = 0
	}
	ss += run * run
	if k == 0 {
		return 1
	}
	return max(1, float64(ss)/float64(k))
}

// judgeErrors bounds the error rate with Clopper–Pearson's exact binomial
// bounds, a call still in flight counted as failed for the upper bound and
// as not failed for the lower, the counts shrunk by burst (the arrivals'
// Burstiness: a burst's calls fail or not together). A limit of 0 cannot be
// bounded from above by any number of calls: it passes on no failure and no
// call left unfinished.
func judgeErrors(o Objective, calls []judgedCall, burst float64) bound {
	b := bound{observed: math.NaN(), lower: math.NaN(), upper: math.NaN()}
	failed := 0
	for _, j := range calls {
		if j.f != nil && o.Client != "" && j.f.client != o.Client {
			continue
		}
		b.calls++
		switch {
		case j.f == nil:
			b.censored++
		case !j.f.ok:
			failed++
		}
	}
	n := b.calls
	if n == 0 {
		b.verdict = verdictUndecided
		return b
	}
	if done := n - b.censored; done > 0 {
		b.observed = float64(failed) / float64(done)
	}
	eff := float64(n) / burst
	b.upper = clopperUpper(float64(failed+b.censored)/burst, eff, Confidence)
	b.lower = clopperLower(float64(failed)/burst, eff, Confidence)
	b.leansPass = float64(failed+b.censored) < o.Limit*float64(n)
	switch {
	case o.Limit == 0 && failed > 0, b.lower > o.Limit:
		b.verdict = verdictFail
	case o.Limit == 0 && b.censored == 0, o.Limit > 0 && b.upper <= o.Limit:
		b.verdict = verdictPass
	default:
		b.verdict = verdictUndecided
	}
	return b
}

// clopperUpper is the one-sided upper bound at conf of a binomial share
// with k successes in n trials: the p at which P(Bin(n, p) ≤ k) = 1 − conf
// (k and n may be effective counts, not whole: the Beta form takes them).
func clopperUpper(k, n, conf float64) float64 {
	if k >= n {
		return 1
	}
	return distuv.Beta{Alpha: k + 1, Beta: n - k}.Quantile(conf)
}

// clopperLower is the one-sided lower bound: the p at which
// P(Bin(n, p) ≥ k) = 1 − conf.
func clopperLower(k, n, conf float64) float64 {
	if k <= 0 {
		return 0
	}
	return distuv.Beta{Alpha: k, Beta: n - k + 1}.Quantile(1 - conf)
}

// judgeObjective is o's bound on the calls, their arrivals' Burstiness
// burst.
func judgeObjective(o Objective, calls []judgedCall, burst float64) bound {
	if o.Figure == FigureErrors {
		return judgeErrors(o, calls, burst)
	}
	return judgeDuration(o, calls, burst)
}
