package llmstream

import (
	"fmt"
	"strconv"
	"time"

	"go.k6.io/k6/metrics"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// llmMetrics holds every metric of DESIGN.md. They are registered eagerly, in the
// init context, so that thresholds naming them validate before the test starts.
type llmMetrics struct {
	ttfb, ttft, ttftAnswer, gap, tpot, tokensPerSec, e2e, parse *metrics.Metric
	serverQueue, serverPrefill                                  *metrics.Metric

	requests, errors, retries, reconnects, stalls             *metrics.Metric
	promptTokens, outputTokens, cachedTokens, reasoningTokens *metrics.Metric

	failed, cacheHit, goodput, regression *metrics.Metric
}

// metricSpec is one row of the metric table.
type metricSpec struct {
	name  string
	typ   metrics.MetricType
	vt    metrics.ValueType
	field **metrics.Metric
}

func (m *llmMetrics) specs() []metricSpec {
	t, c, r := metrics.Trend, metrics.Counter, metrics.Rate
	ms, plain := metrics.Time, metrics.Default
	return []metricSpec{
		{"llm_ttfb", t, ms, &m.ttfb},
		{"llm_ttft", t, ms, &m.ttft},
		{"llm_ttft_answer", t, ms, &m.ttftAnswer},
		{"llm_inter_token_gap", t, ms, &m.gap},
		{"llm_tpot", t, ms, &m.tpot},
		{"llm_tokens_per_sec", t, plain, &m.tokensPerSec},
		{"llm_e2e", t, ms, &m.e2e},
		{"llm_client_parse_time", t, ms, &m.parse},
		{"llm_server_queue_time", t, ms, &m.serverQueue},
		{"llm_server_prefill_time", t, ms, &m.serverPrefill},
		{"llm_requests", c, plain, &m.requests},
		{"llm_errors", c, plain, &m.errors},
		{"llm_retries", c, plain, &m.retries},
		{"llm_reconnects", c, plain, &m.reconnects},
		{"llm_stalls", c, plain, &m.stalls},
		{"llm_prompt_tokens", c, plain, &m.promptTokens},
		{"llm_output_tokens", c, plain, &m.outputTokens},
		{"llm_cached_tokens", c, plain, &m.cachedTokens},
		{"llm_reasoning_tokens", c, plain, &m.reasoningTokens},
		{"llm_failed", r, plain, &m.failed},
		{"llm_cache_hit", r, plain, &m.cacheHit},
		{"llm_goodput", r, plain, &m.goodput},
		{"llm_regression", r, plain, &m.regression},
	}
}

func registerMetrics(reg *metrics.Registry) (*llmMetrics, error) {
	m := &llmMetrics{}
	for _, s := range m.specs() {
		metric, err := reg.NewMetric(s.name, s.typ, s.vt)
		if err != nil {
			return nil, fmt.Errorf("registering %s: %w", s.name, err)
		}
		*s.field = metric
	}
	return m, nil
}

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
