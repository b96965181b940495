package report

import (
	"maps"

	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// Group holds the statistics of one (category, model, stage level), or a merge of several.
type Group struct {
	Requests, Failures uint64
	Errors             map[string]uint64
	// FirstError is the earliest failed call's error, for a report whose
	// calls all failed to say why.
	FirstError FirstError
	// FinishOmitted counts the complete answers whose server named no
	// finish reason (stream.Result.FinishOmitted).
	FinishOmitted uint64
	// Sketches are the distributions of record.Dists, in its order.
	Sketches []*sketch.Sketch

	CacheHit, CacheMiss uint64
	Stalls              uint64
	// GapsUnsampled counts the gaps that gapSamples 'sampled' kept out of
	// k6's llm_inter_token_gap (the figures above use every gap).
	GapsUnsampled uint64
	OutputTokens  int64
	// Tallies are the exact counters the record keeps beside these, so a
	// merged record is diagnosed like a run.
	runrecord.Tallies
	Cost runrecord.Cost
	// Slowest are the slowest traced answers (slowest.go).
	Slowest runrecord.SlowCalls
}

func newGroup() *Group {
	g := &Group{Errors: map[string]uint64{}, Sketches: make([]*sketch.Sketch, len(record.Dists))}
	for i := range g.Sketches {
		g.Sketches[i] = sketch.New(sketch.FineAlpha)
	}
	return g
}

// S returns the sketch of distribution d.
func (g *Group) S(d record.Dist) *sketch.Sketch { return g.Sketches[d.Index()] }

func (g *Group) clone() *Group {
	c := *g
	c.Errors = maps.Clone(g.Errors)
	c.Sketches = make([]*sketch.Sketch, len(g.Sketches))
	for i, s := range g.Sketches {
		c.Sketches[i] = s.Clone()
	}
	c.Slowest = g.Slowest.Clone()
	return &c
}

// merge adds o into g (same accuracy everywhere, so it cannot fail).
func (g *Group) merge(o *Group) {
	g.Requests += o.Requests
	g.Failures += o.Failures
	for k, v := range o.Errors {
		g.Errors[k] += v
	}
	g.FirstError = g.FirstError.earlier(o.FirstError)
	g.FinishOmitted += o.FinishOmitted
	for i, s := range o.Sketches {
		_ = g.Sketches[i].Merge(s)
	}
	g.CacheHit += o.CacheHit
	g.CacheMiss += o.CacheMiss
	g.Stalls += o.Stalls
	g.GapsUnsampled += o.GapsUnsampled
	g.OutputTokens += o.OutputTokens
	g.Tallies.Add(o.Tallies)
	g.Cost.Merge(o.Cost)
	g.Slowest.Merge(o.Slowest)
}

// BurstShare is the share of gaps under nearZeroGapMS (NaN without gaps).
func (g *Group) BurstShare() float64 { return ratio(float64(g.BurstGaps), float64(g.GapCount)) }

// FailureRate is failures / requests (NaN without requests).
func (g *Group) FailureRate() float64 { return ratio(float64(g.Failures), float64(g.Requests)) }

// CacheHitRate is hits among calls whose cache state is known (NaN when none is).
func (g *Group) CacheHitRate() float64 {
	return ratio(float64(g.CacheHit), float64(g.CacheHit+g.CacheMiss))
}

// add records one observation; gs is the summary of its gaps (nil without gaps).
func (g *Group) add(o *Observation, gs *gapScratch) {
	g.Requests++
	g.addOutcome(o)
	g.Reach.Add(reachOf(o))
	if cutByStop(o) {
		// Cut in flight by the test's stop: counted as failed, and nothing
		// of it is a measurement (its partial timings, tokens and cost
		// describe when the test stopped, not the service).
		return
	}
	g.addCache(o)
	g.PromptTokens += o.PromptTokens()
	g.OutputTokens += o.OutputTokens
	g.CachedTokens += o.CachedTokens()
	g.addClientTrouble(o)
	addCost(&g.Cost, o)
	g.GapsUnsampled += uint64(max(o.GapsUnsampled, 0))
	g.addConnection(o)
	g.addDists(o)
	if c, ok := slowCallOf(o); ok {
		g.Slowest.Add(c)
	}
	g.addShares(o)
	if gs != nil {
		g.addGaps(gs)
	}
	if o.OK { // a failed call is not judged (llm_ttft_late)
		g.addTTFTJudgement(o)
	}
}

// addDists adds the call's value of every distribution its row keeps one of
// per call (the gaps are many: addGaps), a failed call's as the row's rule
// says (record.Failed).
func (g *Group) addDists(o *Observation) {
	for i, f := range keptRows {
		if f.Keep.PerEvent {
			continue
		}
		if v, ok := f.Kept(o); ok {
			g.Sketches[i].Add(v)
		}
	}
}

// addOutcome counts a failure by its error type, and an answer whose server
// named no finish reason.
func (g *Group) addOutcome(o *Observation) {
	if !o.OK {
		g.Failures++
		et := o.ErrorType()
		if et == "" {
			et = "unknown"
		}
		g.Errors[et]++
		g.FirstError = g.FirstError.earlier(firstErrorOf(o, et))
	}
	if o.OK && o.FinishOmitted {
		g.FinishOmitted++
	}
}

// addCache counts the call's prompt-cache state, and apart for the calls that
// shared a prefix with an earlier one.
func (g *Group) addCache(o *Observation) {
	switch o.Cache {
	case stream.CacheHit:
		g.CacheHit++
	case stream.CacheMiss:
		g.CacheMiss++
	default:
		g.CacheUnknown++
	}
	if o.SharedPrefix {
		g.SharedPrefix++
		switch o.Cache {
		case stream.CacheHit:
			g.SharedHit++
		case stream.CacheMiss:
			g.SharedMiss++
		}
	}
}

// addClientTrouble counts what the load generator did wrong, whatever the
// answer: stalls and a late idle timer (its lag and how late it sent a
// scheduled call are distributions: addDists).
func (g *Group) addClientTrouble(o *Observation) {
	if o.Stalls > 0 {
		g.Stalls += uint64(o.Stalls)
		g.StalledRequests++
	}
	if o.Starved > 0 {
		g.StarvedRequests++
	}
}

// addConnection counts whether the call opened a connection or reused one.
func (g *Group) addConnection(o *Observation) {
	if o.Connect > 0 {
		g.NewConns++
	} else if o.Connect == 0 {
		g.ReusedConns++
	}
}

// addTTFTJudgement counts an answered call whose TTFT could be judged, and
// whether its first token was read late or its request sent late.
func (g *Group) addTTFTJudgement(o *Observation) {
	if _, known := o.TTFTCheck.Late(); !known {
		return
	}
	g.TTFTJudged++
	switch o.TTFTCheck { //nolint:exhaustive // judged calls only: on time adds nothing but the count
	case stream.TTFTReadLate:
		g.LateFirstReads++
	case stream.TTFTSentLate:
		g.LateSends++
	}
}

// addShares sums a call's connection set-up beside its TTFT, and its parse
// time beside its E2E, for the calls the TTFT and E2E rows count: the shares
// of each that the diagnosis reads.
func (g *Group) addShares(o *Observation) {
	if ttft, ok := rowTTFT.Kept(o); ok {
		g.ConnectSumMS += measure.MS(o.Connect)
		g.ConnectTTFTSumMS += ttft
	}
	if e2e, ok := rowE2E.Kept(o); ok && e2e > 0 {
		g.ParseSumMS += measure.MS(o.ClientParse)
		g.ParseE2ESumMS += e2e
	}
}

// addGaps merges the call's gap summary. Only real gaps go into the
// distribution: a per-call mean would pass for a gap and hide both bursts
// and stalls.
func (g *Group) addGaps(gs *gapScratch) {
	gs.mergeInto(g.Sketches[gapPlace], gs.fine)
	g.LongestGapMS = max(g.LongestGapMS, gs.longest)
	g.GapCount += gs.n
	g.BurstGaps += gs.burstGaps
	g.Bursts += gs.bursts
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return nan()
	}
	return a / b
}

// nearZeroGapMS: a gap under 1 ms is part of a burst (Group.BurstGaps).
const nearZeroGapMS = 1.0

// gapScratch summarises the gaps of one call before the collector's lock is
// taken: the exact burst statistics, and what the group and the timeline
// take of the gaps. A call of many gaps has them sketched (fine, coarse)
// before the lock, and the sketches merged under it, a few hundred buckets
// at most whatever the count. A call of a few (a short answer) keeps their
// values instead (few): filling two sketches, merging and clearing them
// cost it more than the values themselves, and a sketch merges values as
// it merges their sketch (sketch.MergeValues), so the figures are the same.
type gapScratch struct {
	fine, coarse         *sketch.Sketch   // many gaps; nil with few
	few                  [fewGaps]float64 // few gaps, ms, in order: the first n
	n, burstGaps, bursts uint64
	longest              float64
}

// fewGaps is the most gaps a call keeps as values rather than sketches.
const fewGaps = 16

// summarise fills gs from a call's gaps; false when none was measured. gs
// has sketches (many gaps) or none (at most fewGaps).
func (gs *gapScratch) summarise(gaps stream.Gaps) bool {
	inBurst := false
	for i := range gaps {
		v := measure.MS(gaps.At(i))
		if gs.fine != nil {
			gs.fine.Add(v)
			gs.coarse.Add(v)
		} else {
			gs.few[gs.n] = v
		}
		gs.n++
		gs.longest = max(gs.longest, v)
		near := v < nearZeroGapMS
		if near {
			gs.burstGaps++
			if !inBurst {
				gs.bursts++
			}
		}
		inBurst = near
	}
	return gs.n > 0
}

// mergeInto adds the call's gaps to dst: sketched is gs's sketch of them
// at dst's accuracy (gs.fine or gs.coarse), nil with few gaps.
func (gs *gapScratch) mergeInto(dst, sketched *sketch.Sketch) {
	if gs.fine == nil {
		dst.MergeValues(gs.few[:gs.n])
		return
	}
	_ = dst.Merge(sketched)
}

func (gs *gapScratch) reset() {
	gs.fine.Reset()
	gs.coarse.Reset()
	gs.n, gs.burstGaps, gs.bursts, gs.longest = 0, 0, 0, 0
}

type groupKey struct {
	Client, Category, Model, Route string
	Level                          int
}
