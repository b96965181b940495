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
	"github.com/llmstream/xk6-llmstream/internal/record"
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
	// systemTags is k6's systemTags option: the tags k6 defines (status,
	// proto, name) are set only when it names them. nil (no k6 options, as
	// in unit tests) keeps them all.
	systemTags *metrics.SystemTagSet
}

// systemTag says whether the samples carry the k6-defined tag.
func (info *routeInfo) systemTag(tag metrics.SystemTag) bool {
	return info.systemTags == nil || info.systemTags.Has(tag)
}

// outcome is a finished call: every attempt it made, in order, on every route.
type outcome struct {
	attempts []attemptRecord
	canceled bool // the test ended during the call: it is not a data point
	// clientLag is how late this process ran while the call did (Absent when
	// not measured): it is added to every timestamp the call took.
	clientLag time.Duration
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

// fanOut is the one place a finished call goes out: its record is built
// once, its samples are pushed to k6 in one batch, the record goes to the
// report, and its JS result is returned. Call-level figures (llm_requests,
// llm_failed, timings) describe the user's call — answered or not, by
// whichever route — once; llm_attempts counts every attempt by route. After
// the VU's context is done nothing is pushed: a cancelled test stops
// emitting at once, and a call it cut short is not a data point.
func (o *outcome) fanOut(ctx context.Context, out chan<- metrics.SampleContainer, s sinks, ld callLoad) map[string]any {
	rec := o.record(ld)
	if !o.canceled && ctx.Err() == nil {
		o.judge(rec, s.report.regression)
		metrics.PushIfNotDone(ctx, out, s.metrics.samples(o, rec))
		s.report.coll().Add(rec)
	}
	return rec.JS()
}

// record is the call's one record: the final attempt's figures, every
// attempt, and what the route and the process add.
func (o *outcome) record(ld callLoad) *record.Call {
	a := o.final()
	info := a.info
	rec := &record.Call{
		Result: *a.res, Attempts: make([]record.Attempt, len(o.attempts)),
		Name: info.label, Route: info.route, Model: info.model, Category: info.category,
		ItemID: info.itemID, SharedPrefix: info.sharedPrefix, Phase: info.phase, TestStart: info.testStart,
		Tag: info.tags.Tags.Get, Active: ld.active, VUs: ld.vus, Rate: info.rate,
		ClientLag: o.clientLag, EventLag: time.Duration(info.eventLag.Load()),
		GapSamples: info.gapSamples, ResultGaps: info.resultGaps,
	}
	for i, at := range o.attempts {
		rec.Attempts[i] = record.Attempt{Route: at.info.route, Name: at.info.label, Result: at.res, Reconnects: at.reconnects}
	}
	rec.Scenario, _ = info.tags.Tags.Get("scenario")
	b := o.price()
	rec.Cost, rec.Currency, rec.Priced = b.cost, b.currency, b.priced
	return rec
}

// judge adds what only a call that counts is judged by: the SLO, the
// baseline, and which of its gaps the gapSampleRate cap keeps (taking from
// the process's budget).
func (o *outcome) judge(rec *record.Call, regress func(client, category string, ttft time.Duration) (bool, bool)) {
	info := o.final().info
	if slo := info.slo; slo.Set() {
		rec.Goodput = record.VerdictOf(rec.OK && meets(slo, &rec.Result))
	}
	if rec.OK && rec.TTFT >= 0 {
		if slower, known := regress(info.label, info.category, rec.TTFT); known {
			rec.Regression = record.VerdictOf(slower)
		}
	}
	if info.gapSamples == config.GapsSampled && len(rec.Gaps) > 0 {
		keep, kept := info.gapSampler.Take(len(rec.Gaps))
		rec.KeepGap, rec.GapsUnsampled = keep, len(rec.Gaps)-kept
	}
}

// samples builds the whole batch of one call from the figure table, each
// sample at the moment it describes, so k6 pushes it in one channel send:
// one llm_attempts sample per attempt (tagged by its route and number), then
// the call's figures, tagged by the attempt that ended it.
func (m *llmMetrics) samples(o *outcome, rec *record.Call) metrics.Samples {
	out := make(metrics.Samples, 0, m.batchSize(rec))
	tags, meta := o.final().tags(len(o.attempts))
	for i := range record.Figures {
		f := &record.Figures[i]
		metric := m.byFigure[i]
		if metric == nil {
			continue
		}
		if f.PerAttempt {
			for n := range o.attempts {
				at := &o.attempts[n]
				atTags, atMeta := at.tags(n + 1)
				out = append(out, metrics.Sample{
					TimeSeries: metrics.TimeSeries{Metric: metric, Tags: atTags},
					Time:       at.res.End, Metadata: atMeta, Value: 1,
				})
			}
			continue
		}
		f.Samples(rec, func(at time.Time, v float64) {
			out = append(out, metrics.Sample{
				TimeSeries: metrics.TimeSeries{Metric: metric, Tags: tags},
				Time:       at, Metadata: meta, Value: v,
			})
		})
	}
	return out
}

// batchSize is what a call's batch will hold: the call's figures, one
// sample per attempt and the gaps k6 gets (sizing for every gap with
// 'sampled' made a call's batch ten times the size it needed).
func (m *llmMetrics) batchSize(rec *record.Call) int {
	n := m.n + len(rec.Attempts)
	switch rec.GapSamples {
	case config.GapsPerEvent:
		n += len(rec.Gaps)
	case config.GapsSampled:
		n += len(rec.Gaps) - rec.GapsUnsampled
	}
	return n
}

// tags are the samples' tags of attempt n of a call (and of the call, from
// the attempt that ended it): the call's tags, the client's, the route when
// the client has a fallback, the status, cache state and error type.
func (a *attemptRecord) tags(n int) (*metrics.TagSet, map[string]string) {
	r, info := a.res, a.info
	tm := info.tags.Clone()
	tm.SetTag("protocol", info.protocol)
	if info.systemTag(metrics.TagName) {
		tm.SetTag("name", info.label)
	}
	if info.model != "" {
		tm.SetTag("model", info.model)
	}
	if info.tagRoute {
		tm.SetTag("route", info.route)
	}
	if r.RequestID != "" {
		tm.SetMetadata("request_id", r.RequestID)
	}
	tags := tm.Tags.With("cache", r.Cache.String())
	if info.systemTag(metrics.TagStatus) {
		tags = tags.With("status", strconv.Itoa(r.Status))
	}
	if r.Proto != "" && info.systemTag(metrics.TagProto) {
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
