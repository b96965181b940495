package report

import (
	"fmt"
	"maps"

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
	Sketches      [runrecord.NumMetrics]*sketch.Sketch

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
}

func newGroup() *Group {
	g := &Group{Errors: map[string]uint64{}}
	for i := range g.Sketches {
		g.Sketches[i] = sketch.New(sketch.FineAlpha)
	}
	return g
}

// S returns the sketch of metric m.
func (g *Group) S(m runrecord.Metric) *sketch.Sketch { return g.Sketches[m] }

func (g *Group) clone() *Group {
	c := *g
	c.Errors = maps.Clone(g.Errors)
	for i, s := range g.Sketches {
		c.Sketches[i] = s.Clone()
	}
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
}

// unsampledLine says how many gaps the gap-sample cap kept out of k6's
// llm_inter_token_gap ("" when none were).
func (g *Group) unsampledLine() string {
	if g.GapsUnsampled == 0 {
		return ""
	}
	return fmt.Sprintf("llm_inter_token_gap in k6 is a uniform sample: the gapSampleRate cap left out %d of %d gaps "+
		"(%s); the gap figures of this report use every gap", g.GapsUnsampled, g.GapCount, fmtPct(ratio(float64(g.GapsUnsampled), float64(g.GapCount))))
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
	g.addCache(o)
	g.PromptTokens += o.PromptTokens()
	g.OutputTokens += o.OutputTokens
	g.CachedTokens += o.CachedTokens()
	g.addClientTrouble(o)
	addCost(&g.Cost, o)
	g.GapsUnsampled += uint64(max(o.GapsUnsampled, 0))
	g.addConnection(o)
	if !o.OK {
		return // partial timings of failed calls would bias every latency figure
	}
	g.addTTFTJudgement(o)
	g.addLatencies(o)
	g.addPace(o)
	if gs != nil {
		g.addGaps(gs)
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

// addClientTrouble records what the load generator did wrong, whatever the
// answer: stalls, a late idle timer, the client's lag, and how late a
// scheduled call was sent (a failed call was sent late as much as an
// answered one).
func (g *Group) addClientTrouble(o *Observation) {
	if o.Stalls > 0 {
		g.Stalls += uint64(o.Stalls)
		g.StalledRequests++
	}
	if o.Starved > 0 {
		g.StarvedRequests++
	}
	if o.ClientLag > 0 {
		v, _ := ms(o.ClientLag)
		g.Sketches[runrecord.MetricClientLag].Add(v)
	}
	if v, ok := ms(o.DispatchDelay()); ok {
		// Lateness is the load generator's, whatever the answer: a failed
		// call was sent late as much as an answered one.
		g.Sketches[runrecord.MetricDispatchDelay].Add(v)
	}
}

// addConnection records the time to response headers and whether the call
// opened a connection (with its set-up time) or reused one.
func (g *Group) addConnection(o *Observation) {
	if v, ok := ms(o.TTFB); ok {
		g.Sketches[runrecord.MetricTTFB].Add(v)
	}
	if o.Connect > 0 {
		g.NewConns++
		v, _ := ms(o.Connect)
		g.Sketches[runrecord.MetricConnect].Add(v)
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

// addLatencies records an answered call's TTFT (by cache state, with its
// connection and network shares), its E2E, and both counted from the due
// time of a scheduled call.
func (g *Group) addLatencies(o *Observation) {
	ttft, hasTTFT := ms(o.TTFT)
	if hasTTFT {
		g.Sketches[runrecord.MetricTTFT].Add(ttft)
		switch o.Cache {
		case stream.CacheHit:
			g.Sketches[runrecord.MetricTTFTCacheHit].Add(ttft)
		case stream.CacheMiss:
			g.Sketches[runrecord.MetricTTFTCacheMiss].Add(ttft)
		}
		if c, ok := ms(o.Connect); ok {
			g.ConnectSumMS += c
			g.ConnectTTFTSumMS += ttft
		}
		if ttft > 0 {
			g.Sketches[runrecord.MetricNetworkShare].Add(networkShare(o, ttft))
		}
	}
	if v, ok := ms(o.TTFTAnswer); ok {
		g.Sketches[runrecord.MetricTTFTAnswer].Add(v)
	}
	e2e, hasE2E := ms(o.E2E)
	if hasE2E {
		g.Sketches[runrecord.MetricE2E].Add(e2e)
	}
	if v, ok := ms(o.FromDue(o.TTFT)); ok {
		g.Sketches[runrecord.MetricTTFTFromDue].Add(v)
	}
	if v, ok := ms(o.FromDue(o.E2E)); ok {
		g.Sketches[runrecord.MetricE2EFromDue].Add(v)
	}
}

// addPace records an answered call's decode pace and the client's own cost:
// time per output token, tokens/s, parse time (and its share of E2E) and the
// event loop's lag.
func (g *Group) addPace(o *Observation) {
	if v, ok := ms(o.TPOT); ok {
		g.Sketches[runrecord.MetricTPOT].Add(v)
	}
	if o.TokensPerSec > 0 {
		g.Sketches[runrecord.MetricTokensPerSec].Add(o.TokensPerSec)
	}
	if p, ok := ms(o.ClientParse); ok {
		g.Sketches[runrecord.MetricClientParse].Add(p)
		if e2e, hasE2E := ms(o.E2E); hasE2E && e2e > 0 {
			g.ParseSumMS += p
			g.ParseE2ESumMS += e2e
		}
	}
	if o.EventLag > 0 {
		v, _ := ms(o.EventLag)
		g.Sketches[runrecord.MetricEventLag].Add(v)
	}
}

// addGaps merges the call's gap summary. Only real gaps go into the
// distribution: a per-call mean would pass for a gap and hide both bursts
// and stalls.
func (g *Group) addGaps(gs *gapScratch) {
	_ = g.Sketches[runrecord.MetricGap].Merge(gs.fine)
	g.LongestGapMS = max(g.LongestGapMS, gs.longest)
	g.GapCount += gs.n
	g.BurstGaps += gs.burstGaps
	g.Bursts += gs.bursts
}

// networkShare is the part of TTFT spent before the server could answer: the
// time to response headers when they came before the first token (a server
// that sends headers with the first token tells us nothing), else the
// connection set-up.
func networkShare(o *Observation, ttftMS float64) float64 {
	net := 0.0
	if c, ok := ms(o.Connect); ok {
		net = c
	}
	if b, ok := ms(o.TTFB); ok && b < 0.9*ttftMS && b > net {
		net = b
	}
	return min(1, net/ttftMS)
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
// taken: the sketches merged into the group and the timeline, and the exact
// burst statistics.
type gapScratch struct {
	fine, coarse         *sketch.Sketch
	n, burstGaps, bursts uint64
	longest              float64
}

// summarise fills gs from a call's gaps; false when none was measured.
func (gs *gapScratch) summarise(gaps stream.Gaps) bool {
	inBurst := false
	for i := range gaps {
		v, ok := ms(gaps.At(i))
		if !ok {
			continue
		}
		gs.fine.Add(v)
		gs.coarse.Add(v)
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

func (gs *gapScratch) reset() {
	gs.fine.Reset()
	gs.coarse.Reset()
	gs.n, gs.burstGaps, gs.bursts, gs.longest = 0, 0, 0, 0
}

type groupKey struct {
	Client, Category, Model, Route string
	Level                          int
}
