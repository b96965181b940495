package llmstream

import (
	"context"
	"strconv"
	"time"

	"go.k6.io/k6/lib"
	"go.k6.io/k6/metrics"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/report"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// outcome is a finished call, across retries and fallback.
type outcome struct {
	res        *stream.Result
	status     int
	retries    int
	reconnects int
	connect    time.Duration
	servedBy   string
	plan       *callPlan
}

func (o *outcome) errType() string {
	if o.res.Err == nil {
		return ""
	}
	return string(o.res.Err.Type)
}

func (o *outcome) errMessage() string {
	if o.res.Err == nil {
		return ""
	}
	return o.res.Err.Message
}

// emit pushes the call's samples in one batch. After the VU's context is done
// nothing is pushed: a cancelled test stops emitting at once.
func (c *Client) emit(ctx context.Context, st *lib.State, out *outcome, attempt int) {
	plan := out.plan
	tm := plan.tags.Clone()
	tm.SetTag("protocol", c.opts.Protocol.Name)
	tm.SetTag("name", c.name())
	if plan.model != "" {
		tm.SetTag("model", plan.model)
	}
	if c.fallback != nil || plan.route == "fallback" {
		tm.SetTag("route", plan.route)
	}
	if out.res.RequestID != "" {
		tm.SetMetadata("request_id", out.res.RequestID)
	}
	e := &emission{
		res: out.res, status: out.status, retries: out.retries, reconnects: out.reconnects, attempt: attempt, opts: c.opts,
		gaps: c.opts.GapSamples == config.GapsPerEvent, tags: tm.Tags, meta: tm.Metadata,
		category: plan.category, regress: c.mi.root.report.regression,
	}
	metrics.PushIfNotDone(ctx, st.Samples, c.mi.metrics.samples(e))
}

// toJS builds the result object of DESIGN.md: flat, camelCase, times in ms.
// Figures that could not be measured are null, never a made-up zero.
func (o *outcome) toJS() map[string]any {
	r := o.res
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
		"status":           o.status,
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
		"retries":          o.retries,
		"reconnects":       o.reconnects,
		"servedBy":         o.servedBy,
		"requestId":        r.RequestID,
		"serverTimings":    timings,
		"cache":            cacheState(r),
		"gaps":             nil,
	}
	if o.plan.params.Gaps {
		gaps := make([]float64, len(r.Gaps))
		for i, g := range r.Gaps {
			gaps[i] = msf(g)
		}
		m["gaps"] = gaps
	}
	return m
}

func ms(d time.Duration) any {
	if d < 0 { // stream.Absent
		return nil
	}
	return msf(d)
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// cacheState says whether the prompt hit the server's prefix cache, as far as
// the server's usage tells: servers that report no usage leave it unknown.
func cacheState(r *stream.Result) string {
	switch {
	case r.Usage == nil || r.Usage.PromptTokens == 0 && r.Usage.CachedTokens == 0:
		return "unknown"
	case r.Usage.CachedTokens > 0:
		return "hit"
	default:
		return "miss"
	}
}

// emission is what one finished call turns into samples.
type emission struct {
	res        *stream.Result
	status     int
	retries    int
	reconnects int
	attempt    int
	opts       *config.Client
	gaps       bool // per-event gap samples
	tags       *metrics.TagSet
	meta       map[string]string
	regress    func(category string, ttft time.Duration) (slower, known bool)
	category   string
}

// samples builds the whole batch for one request, each sample at the moment it
// describes, so k6 pushes it in one channel send.
func (m *llmMetrics) samples(e *emission) metrics.Samples {
	r := e.res
	cache := cacheState(r)
	tags := e.tags.With("status", strconv.Itoa(e.status)).With("cache", cache)
	if e.attempt > 1 {
		tags = tags.With("attempt", strconv.Itoa(e.attempt))
	}
	if !r.OK {
		tags = tags.With("error_type", string(r.Err.Type))
	}
	out := make(metrics.Samples, 0, 24+len(r.Gaps))
	add := func(metric *metrics.Metric, at time.Time, v float64) {
		out = append(out, metrics.Sample{
			TimeSeries: metrics.TimeSeries{Metric: metric, Tags: tags},
			Time:       at, Metadata: e.meta, Value: v,
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
	if e.retries > 0 {
		add(m.retries, end, float64(e.retries))
	}
	if e.reconnects > 0 {
		add(m.reconnects, end, float64(e.reconnects))
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
	case e.gaps:
		at := r.FirstOutAt
		for _, g := range r.Gaps {
			at = at.Add(g)
			add(m.gap, at, metrics.D(g))
		}
	case r.GapMean >= 0 && e.opts.GapSamples == config.GapsPerRequest:
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
	if cache != "unknown" {
		add(m.cacheHit, end, boolValue(cache == "hit"))
	}
	if q, ok := r.ServerTimings["queue"]; ok {
		add(m.serverQueue, end, q)
	}
	if p, ok := r.ServerTimings["prefill"]; ok {
		add(m.serverPrefill, end, p)
	}
	if slo := e.opts.SLO; slo.Set() {
		add(m.goodput, end, boolValue(r.OK && meets(slo, r)))
	}
	if e.regress != nil && r.OK && r.TTFT >= 0 {
		if slower, known := e.regress(e.category, r.TTFT); known {
			add(m.regression, end, boolValue(slower))
		}
	}
	return out
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

// observe feeds one finished call to the report's collector.
func (c *Client) observe(out *outcome, active, vus int) {
	c.mi.noteLoad()
	r := out.res
	obs := &report.Observation{
		Start: r.Start, End: r.End, Category: out.plan.category, Model: out.plan.model, Name: c.name(),
		Route: out.plan.route, OK: r.OK, TTFB: r.TTFB, TTFT: r.TTFT, TTFTAnswer: r.TTFTAnswer, E2E: r.E2E,
		TPOT: r.TPOT, ClientParse: r.ClientParse, Connect: out.connect, Gaps: r.Gaps, GapMean: r.GapMean,
		TokensPerSec: r.TokensPerSec, OutputTokens: r.OutputTokens, Cache: cacheState(r), Stalls: r.Stalls,
		Active: active, VUs: vus, Starved: r.Starved, SharedPrefix: out.plan.sharedPrefix, EventLag: time.Duration(out.plan.eventLag.Load()),
	}
	if r.Err != nil {
		obs.ErrorType = string(r.Err.Type)
	}
	if u := r.Usage; u != nil {
		obs.PromptTokens, obs.CachedTokens = u.PromptTokens, u.CachedTokens
	}
	if sc, ok := out.plan.tags.Tags.Get("scenario"); ok {
		obs.Scenario = sc
	}
	obs.ItemID, obs.Phase, obs.TestStart, obs.Tag = out.plan.itemID, out.plan.phase, out.plan.testStart, out.plan.tags.Tags.Get
	obs.Rate = out.plan.rate
	c.mi.root.report.coll().Add(obs)
}
