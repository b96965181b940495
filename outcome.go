package llmstream

// A finished call fans out from one function, fanOut: to the JS result, to k6's
// samples and to the report's collector. Everything here only reads the outcome
// that retry.go produced.

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
	"go.k6.io/k6/metrics"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/report"
	"github.com/llmstream/xk6-llmstream/internal/sample"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// sinks are where finished calls go: k6's metrics and the report's collector
// (with the baseline behind llm_regression).
type sinks struct {
	metrics    *llmMetrics
	report     *reportState
	samplers   *gapSamplers
	lagWarning *lagWarning
}

// gapSamplers are the process-wide samplers of gapSamples 'sampled', one per
// cap (Clients with the same gapSampleRate share one budget).
type gapSamplers struct {
	mu sync.Mutex
	m  map[int]*sample.Sampler
}

func (g *gapSamplers) get(rate int) *sample.Sampler {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = map[int]*sample.Sampler{}
	}
	s, ok := g.m[rate]
	if !ok {
		s = sample.New(float64(rate))
		g.m[rate] = s
	}
	return s
}

// The process's own lag is sampled every lagInterval and kept for lagHistory
// (a call's lag is the mean tick while it ran). A call that met more than
// lagWarnAt logs a warning, at most once every lagWarnEvery in the process:
// past it a call's timings are off by more than the figures they are read
// against (a token gap of tens of ms, a TTFT of a few hundred).
const (
	lagInterval  = 50 * time.Millisecond
	lagHistory   = time.Minute
	lagWarnAt    = 25 * time.Millisecond
	lagWarnEvery = 30 * time.Second
)

// lagWarning tells the user while the test runs that this load generator is
// running late, so its latencies are inflated.
type lagWarning struct {
	last                         atomic.Int64 // when the last warning was logged, ns
	judged, lateReads, lateSends atomic.Int64 // noteTTFT's window
}

// ttftWindow is how many judged calls noteTTFT weighs at once: the report's
// rule (report.LateTTFTMin late calls, and report.LateTTFTShare of them) over
// the last 300 calls.
const ttftWindow = 300

// due says whether a warning may be logged now (one per lagWarnEvery in the
// process, whichever kind), and claims the slot.
func (w *lagWarning) due() bool {
	now, last := time.Now().UnixNano(), w.last.Load()
	return now-last >= int64(lagWarnEvery) && w.last.CompareAndSwap(last, now)
}

func (w *lagWarning) check(log logrus.FieldLogger, lag time.Duration) {
	if lag < lagWarnAt || log == nil || !w.due() {
		return
	}
	log.Warnf("llmstream: this load generator ran %s late while a call was in flight (Go scheduler latency, "+
		"timer lateness): client-side timings are inflated by up to that much. Give k6 more CPU or split the test "+
		"across instances; llm_client_lag has the figure of every call", lag.Round(time.Millisecond))
}

// noteTTFT counts the calls whose TTFT could be judged, and those this
// process made late (stream.TTFTCheck: the first token read with the next,
// the request sent late), and warns when the last ttftWindow would make the
// report's client_bound rule fire: single late calls happen, a share of them
// means this process is late whenever calls start or first tokens come (calls
// that start and end together meet it even when llm_client_lag is low).
func (w *lagWarning) noteTTFT(log logrus.FieldLogger, check stream.TTFTCheck) {
	if _, known := check.Late(); !known {
		return
	}
	switch check { //nolint:exhaustive // judged calls only: on time adds nothing but the count
	case stream.TTFTReadLate:
		w.lateReads.Add(1)
	case stream.TTFTSentLate:
		w.lateSends.Add(1)
	}
	if w.judged.Add(1) < ttftWindow {
		return
	}
	n, reads, sends := w.judged.Swap(0), w.lateReads.Swap(0), w.lateSends.Swap(0)
	if log == nil || !report.LateTTFTsBound(uint64(reads+sends), uint64(n)) || !w.due() { //nolint:gosec // counts
		return
	}
	log.Warnf("llmstream: of the last %d calls, %d read their first token together with the next one (which had "+
		"arrived a decode step later) and %d sent their request half a decode step or more late: this load "+
		"generator was running late just then, and those TTFTs are over by that much. Spread the calls (ramp "+
		"the VUs up rather than starting them together, mixed prompts, an arrival-rate executor), give k6 more CPU or split the test; llm_ttft_late counts them",
		n, reads, sends)
}

// callLoad is the load a call met when it started.
type callLoad struct {
	active int // streams in flight in this process
	vus    int // k6's active VUs (0 outside a k6 run)
}

// routeInfo is what a route's samples, result and observation say about it,
// and the client settings that shape them.
type routeInfo struct {
	route        string // routePrimary or routeFallback
	label        string // the client's name, else its base URL: the name tag and servedBy
	protocol     string
	model        string
	category     string
	tags         metrics.TagsAndMeta
	tagRoute     bool      // the route tag is set (clients with a fallback, and the fallback)
	sharedPrefix bool      // the prompt came from a dataset's shared-prefix set
	itemID       string    // the dataset item's id, for paired comparisons
	phase        string    // setup or teardown for calls made there
	testStart    time.Time // when k6 started the test (zero before it has)
	rate         float64   // the arrival rate of an arrival-rate scenario at the call's start
	gapSamples   string
	gapSampler   *sample.Sampler // with gapSamples 'sampled'
	slo          config.SLO
	prices       *config.Prices // nil: the client has no prices
	resultGaps   bool           // result.gaps was asked for
	eventLag     atomic.Int64   // longest wait of an event for its JS callback, ns
}

// outcome is a finished call: every attempt it made, in order, on every route.
type outcome struct {
	attempts []attemptRecord
	canceled bool // the test ended during the call: it is not a data point
	// clientLag is how late this process ran while the call did (Absent when
	// not measured): it is added to every timestamp the call took.
	clientLag time.Duration
	bill      bill // what the call cost, priced once by fanOut
}

// ttftCheck is whether this process made the final attempt's TTFT late
// (stream.TTFTCheck: its first token read with the next one, or its request
// sent late); a failed call is not judged.
func (o *outcome) ttftCheck() stream.TTFTCheck {
	if !o.final().res.OK {
		return stream.TTFTUnjudged
	}
	return o.final().res.TTFTCheck
}

// ttftLate is ttftCheck as a Rate: k6 keeps two counters for it, not a
// sample per call; known is false when the call was not judged.
func (o *outcome) ttftLate() (late, known bool) { return o.ttftCheck().Late() }

// ttftLateValue is result.ttftLate: true, false, or null when not judged.
func (o *outcome) ttftLateValue() any {
	if late, known := o.ttftLate(); known {
		return late
	}
	return nil
}

// bill is what a call cost; priced is false when no route had prices.
type bill struct {
	cost     config.Cost
	currency string
	priced   bool
}

// price is what the call cost, every attempt's tokens priced by its route's
// client (a provider bills a failed attempt's output too).
func (o *outcome) price() (b bill) {
	for _, a := range o.attempts {
		p := a.info.prices
		if p == nil {
			continue
		}
		b.cost = b.cost.Plus(p.Cost(a.res.Usage, a.res.OutputTokens))
		if !b.priced {
			b.currency = p.Currency
		} else if b.currency != p.Currency {
			b.currency = "mixed"
		}
		b.priced = true
	}
	return b
}

// attemptRecord is one attempt (with its reconnections) of a call.
type attemptRecord struct {
	info       *routeInfo
	res        *stream.Result
	reconnects int
}

func (o *outcome) add(info *routeInfo, res *stream.Result, reconnects int) {
	o.attempts = append(o.attempts, attemptRecord{info: info, res: res, reconnects: reconnects})
}

// final is the attempt whose answer the call returns: the last one.
func (o *outcome) final() *attemptRecord { return &o.attempts[len(o.attempts)-1] }

func (o *outcome) ok() bool { return o.final().res.OK }

// retries counts every attempt after the first, on whichever route.
func (o *outcome) retries() int { return len(o.attempts) - 1 }

// reconnects counts the reopened raw streams of every attempt.
func (o *outcome) reconnects() int {
	n := 0
	for _, a := range o.attempts {
		n += a.reconnects
	}
	return n
}

// fanOut is the one place a finished call goes out: its samples are pushed to
// k6 in one batch, it is added to the report, and its JS result is returned.
// Call-level figures (llm_requests, llm_failed, timings) describe the user's
// call — answered or not, by whichever route — once; llm_attempts counts
// every attempt by route. After the VU's context is done nothing is pushed: a
// cancelled test stops emitting at once, and a call it cut short is not a
// data point.
func (o *outcome) fanOut(ctx context.Context, out chan<- metrics.SampleContainer, s sinks, ld callLoad) map[string]any {
	o.bill = o.price()
	if !o.canceled && ctx.Err() == nil {
		batch, unsampled := s.metrics.samples(o, s.report.regression)
		metrics.PushIfNotDone(ctx, out, batch)
		obs := o.observation(ld)
		obs.GapsUnsampled = unsampled
		s.report.coll().Add(obs)
	}
	return o.result()
}

// result is the JS result: flat, camelCase, times in ms. Figures that could
// not be measured are null, never a made-up zero.
func (o *outcome) result() map[string]any {
	a := o.final()
	r := a.res
	var errObj any
	if r.Err != nil {
		errObj = map[string]any{"type": string(r.Err.Type), "message": r.Err.Message}
	}
	var usage any
	if u := r.Usage; u != nil {
		usage = map[string]any{
			"promptTokens": u.PromptTokens, "completionTokens": u.CompletionTokens,
			"cachedTokens": u.CachedTokens, "reasoningTokens": u.ReasoningTokens, "totalTokens": u.TotalTokens,
		}
	}
	tools := make([]any, 0, len(r.ToolCalls))
	for _, t := range r.ToolCalls {
		tools = append(tools, map[string]any{"index": t.Index, "id": t.ID, "name": t.Name, "arguments": t.Arguments})
	}
	var timings any
	if len(r.ServerTimings) > 0 {
		timings = r.ServerTimings
	}
	var tps any
	if r.TPOT >= 0 {
		tps = r.TokensPerSec
	}
	share := 0.0
	if r.E2E > 0 {
		share = float64(r.ClientParse) / float64(r.E2E)
	}
	m := map[string]any{
		"ok":               r.OK,
		"status":           r.Status,
		"error":            errObj,
		"text":             r.Text,
		"reasoningText":    r.Reasoning,
		"toolCalls":        tools,
		"finishReason":     r.FinishReason,
		"usage":            usage,
		"tokenSource":      r.TokenSource,
		"model":            r.Model,
		"ttfb":             ms(r.TTFB),
		"ttft":             ms(r.TTFT),
		"ttftAnswer":       ms(r.TTFTAnswer),
		"e2e":              ms(r.E2E),
		"tpot":             ms(r.TPOT),
		"tokensPerSec":     tps,
		"clientParseTime":  ms(r.ClientParse),
		"clientParseShare": share,
		"chunks":           r.Chunks,
		"outputTokens":     r.OutputTokens,
		"stalls":           r.Stalls,
		"retries":          o.retries(),
		"reconnects":       o.reconnects(),
		"servedBy":         a.info.label,
		"route":            a.info.route,
		"attempts":         o.attemptList(),
		"requestId":        r.RequestID,
		"serverTimings":    timings,
		"cache":            r.Cache.String(),
		"proto":            r.Proto,
		"clientLag":        ms(o.clientLag),
		"ttftLate":         o.ttftLateValue(),
		"sendWait":         ms(r.SendWait),
		"cost":             o.costObject(),
		"gaps":             nil,
	}
	if a.info.resultGaps {
		m["gaps"] = gapList(r.Gaps)
	}
	m["choices"] = choiceList(r.Choices, a.info.resultGaps)
	return m
}

// costObject is result.cost: null without prices.
func (o *outcome) costObject() any {
	b := o.bill
	if !b.priced {
		return nil
	}
	c := b.cost
	return map[string]any{
		"total": c.Total(), "input": c.Input, "cachedInput": c.CachedInput, "output": c.Output,
		"reasoning": c.Reasoning, "savedByCache": c.Saved, "currency": b.currency,
	}
}

// attemptList is result.attempts: every attempt of the call, in order.
func (o *outcome) attemptList() []any {
	out := make([]any, len(o.attempts))
	for i, a := range o.attempts {
		r := a.res
		var errObj any
		if r.Err != nil {
			errObj = map[string]any{"type": string(r.Err.Type), "message": r.Err.Message}
		}
		out[i] = map[string]any{
			"route": a.info.route, "servedBy": a.info.label, "ok": r.OK, "status": r.Status, "error": errObj,
			"ttfb": ms(r.TTFB), "ttft": ms(r.TTFT), "e2e": ms(r.E2E), "reconnects": a.reconnects,
		}
	}
	return out
}

// gapList is a gap series in ms, for the JS result.
func gapList(g stream.Gaps) []float64 {
	out := make([]float64, len(g))
	for i := range g {
		out[i] = msf(g.At(i))
	}
	return out
}

// choiceList is result.choices: each answer of a call that asked for several
// (n > 1), or null.
func choiceList(choices []stream.Choice, withGaps bool) any {
	if len(choices) == 0 {
		return nil
	}
	out := make([]any, len(choices))
	for i, ch := range choices {
		c := map[string]any{"index": ch.Index, "text": ch.Text, "reasoningText": ch.Reasoning,
			"finishReason": ch.FinishReason, "gaps": nil}
		if withGaps {
			c["gaps"] = gapList(ch.Gaps)
		}
		out[i] = c
	}
	return out
}

func ms(d time.Duration) any {
	if d < 0 { // stream.Absent
		return nil
	}
	return msf(d)
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// samples builds the whole batch of one call, each sample at the moment it
// describes, so k6 pushes it in one channel send: one llm_attempts sample per
// attempt (tagged by its route and number), then the call's figures from the
// attempt that ended it. unsampled is how many of the call's gaps the
// gapSampleRate cap kept out of llm_inter_token_gap.
func (m *llmMetrics) samples(o *outcome, regress func(client, category string, ttft time.Duration) (bool, bool)) (batch metrics.Samples, unsampled int) {
	a := o.final()
	r, info := a.res, a.info
	// The batch is sized for what it will hold: the call's figures, one
	// sample per attempt and the gaps k6 gets — all of them with 'event', the
	// kept ones with 'sampled' (sizing for every gap there made a call's batch
	// ten times the size it needed).
	var keep func(int) bool
	kept := 0
	switch {
	case info.gapSamples == config.GapsPerEvent:
		kept = len(r.Gaps)
	case info.gapSamples == config.GapsSampled && len(r.Gaps) > 0:
		keep, kept = info.gapSampler.Take(len(r.Gaps))
	}
	out := make(metrics.Samples, 0, 24+kept+len(o.attempts))
	for i := range o.attempts {
		at := &o.attempts[i]
		tags, meta := at.tags(i + 1)
		out = append(out, metrics.Sample{
			TimeSeries: metrics.TimeSeries{Metric: m.attempts, Tags: tags},
			Time:       at.res.End, Metadata: meta, Value: 1,
		})
	}
	tags, meta := a.tags(len(o.attempts))
	add := func(metric *metrics.Metric, at time.Time, v float64) {
		out = append(out, metrics.Sample{
			TimeSeries: metrics.TimeSeries{Metric: metric, Tags: tags},
			Time:       at, Metadata: meta, Value: v,
		})
	}
	addDur := func(metric *metrics.Metric, start time.Time, d time.Duration) {
		if d >= 0 {
			add(metric, start.Add(d), metrics.D(d))
		}
	}
	end := r.End
	add(m.requests, end, 1)
	if r.OK {
		add(m.failed, end, 0)
	} else {
		add(m.failed, end, 1)
		add(m.errors, end, 1)
	}
	if n := o.retries(); n > 0 {
		add(m.retries, end, float64(n))
	}
	if n := o.reconnects(); n > 0 {
		add(m.reconnects, end, float64(n))
	}
	if o.clientLag >= 0 {
		add(m.clientLag, end, metrics.D(o.clientLag))
	}
	if late, known := o.ttftLate(); known {
		add(m.ttftLate, end, boolValue(late))
	}
	if o.bill.priced {
		add(m.cost, end, o.bill.cost.Total())
	}
	if r.Status != 0 { // a response came, so a connection was had: new or reused
		add(m.connReused, end, boolValue(r.Connect == 0))
		if r.Connect > 0 {
			add(m.connOpened, end, 1)
		}
	}
	addDur(m.ttfb, r.Start, r.TTFB)
	addDur(m.ttft, r.Start, r.TTFT)
	addDur(m.ttftAnswer, r.Start, r.TTFTAnswer)
	addDur(m.e2e, r.Start, r.E2E)
	if r.TPOT >= 0 {
		add(m.tpot, r.LastOutAt, metrics.D(r.TPOT))
		add(m.tokensPerSec, r.LastOutAt, r.TokensPerSec)
	}
	add(m.parse, end, metrics.D(r.ClientParse))
	switch {
	case info.gapSamples == config.GapsPerEvent:
		at := r.FirstOutAt
		for i := range r.Gaps {
			g := r.Gaps.At(i)
			at = at.Add(g)
			add(m.gap, at, metrics.D(g))
		}
	case keep != nil:
		at := r.FirstOutAt
		for i := range r.Gaps {
			g := r.Gaps.At(i)
			at = at.Add(g)
			if keep(i) {
				add(m.gap, at, metrics.D(g))
			}
		}
		if unsampled = len(r.Gaps) - kept; unsampled > 0 {
			add(m.gapsUnsampled, end, float64(unsampled))
		}
	case r.GapMean >= 0 && info.gapSamples == config.GapsPerRequest:
		add(m.gap, r.LastOutAt, metrics.D(r.GapMean))
	}
	if r.Stalls > 0 {
		add(m.stalls, end, float64(r.Stalls))
	}
	if u := r.Usage; u != nil {
		addCount(add, m.promptTokens, end, u.PromptTokens)
		addCount(add, m.cachedTokens, end, u.CachedTokens)
		addCount(add, m.reasoningTokens, end, u.ReasoningTokens)
	}
	addCount(add, m.outputTokens, end, r.OutputTokens)
	if r.Cache != stream.CacheUnknown {
		add(m.cacheHit, end, boolValue(r.Cache == stream.CacheHit))
	}
	if q, ok := r.ServerTimings["queue"]; ok {
		add(m.serverQueue, end, q)
	}
	if p, ok := r.ServerTimings["prefill"]; ok {
		add(m.serverPrefill, end, p)
	}
	if slo := info.slo; slo.Set() {
		add(m.goodput, end, boolValue(r.OK && meets(slo, r)))
	}
	if r.OK && r.TTFT >= 0 {
		if slower, known := regress(info.label, info.category, r.TTFT); known {
			add(m.regression, end, boolValue(slower))
		}
	}
	return out, unsampled
}

// tags are the samples' tags of attempt n of a call (and of the call, from
// the attempt that ended it): the call's tags, the client's, the route when
// the client has a fallback, the status, cache state and error type.
func (a *attemptRecord) tags(n int) (*metrics.TagSet, map[string]string) {
	r, info := a.res, a.info
	tm := info.tags.Clone()
	tm.SetTag("protocol", info.protocol)
	tm.SetTag("name", info.label)
	if info.model != "" {
		tm.SetTag("model", info.model)
	}
	if info.tagRoute {
		tm.SetTag("route", info.route)
	}
	if r.RequestID != "" {
		tm.SetMetadata("request_id", r.RequestID)
	}
	tags := tm.Tags.With("status", strconv.Itoa(r.Status)).With("cache", r.Cache.String())
	if r.Proto != "" {
		tags = tags.With("proto", r.Proto)
	}
	if n > 1 {
		tags = tags.With("attempt", strconv.Itoa(n))
	}
	if !r.OK {
		tags = tags.With("error_type", string(r.Err.Type))
	}
	return tags, tm.Metadata
}

func meets(slo config.SLO, r *stream.Result) bool {
	within := func(limit, got time.Duration) bool { return limit <= 0 || (got >= 0 && got <= limit) }
	tpotOK := slo.TPOT <= 0 || r.TPOT < 0 || r.TPOT <= slo.TPOT // one-token answers have no TPOT
	return within(slo.TTFT, r.TTFT) && within(slo.E2E, r.E2E) && tpotOK
}

func addCount(add func(*metrics.Metric, time.Time, float64), m *metrics.Metric, at time.Time, n int64) {
	if n > 0 {
		add(m, at, float64(n))
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// observation is what the report's collector keeps of a call: the figures of
// the attempt that ended it, the process's lag and the cost of every attempt.
func (o *outcome) observation(ld callLoad) *report.Observation {
	a := o.final()
	r, info := a.res, a.info
	obs := &report.Observation{
		Start: r.Start, End: r.End, Category: info.category, Model: info.model, Name: info.label,
		Route: info.route, OK: r.OK, TTFB: r.TTFB, TTFT: r.TTFT, TTFTAnswer: r.TTFTAnswer, E2E: r.E2E,
		TPOT: r.TPOT, ClientParse: r.ClientParse, Connect: r.Connect, Gaps: r.Gaps, TTFTCheck: r.TTFTCheck,
		TokensPerSec: r.TokensPerSec, OutputTokens: r.OutputTokens, Cache: r.Cache, Stalls: r.Stalls,
		Active: ld.active, VUs: ld.vus, Starved: r.Starved, SharedPrefix: info.sharedPrefix,
		EventLag: time.Duration(info.eventLag.Load()),
	}
	if r.Err != nil {
		obs.ErrorType = string(r.Err.Type)
	}
	if u := r.Usage; u != nil {
		obs.PromptTokens, obs.CachedTokens = u.PromptTokens, u.CachedTokens
	}
	if sc, ok := info.tags.Tags.Get("scenario"); ok {
		obs.Scenario = sc
	}
	obs.ItemID, obs.Phase, obs.TestStart, obs.Tag = info.itemID, info.phase, info.testStart, info.tags.Tags.Get
	obs.Rate = info.rate
	obs.ClientLag = max(o.clientLag, 0)
	if b := o.bill; b.priced {
		obs.Priced, obs.Cost, obs.CostSaved, obs.Currency = true, b.cost.Total(), b.cost.Saved, b.currency
	}
	return obs
}
