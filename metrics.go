package llmstream

// The metric registry: every llm_* metric, its type and unit. The samples of a
// call are built in outcome.go.

import (
	"fmt"

	"go.k6.io/k6/metrics"
)

// llmMetrics holds every llm_* metric (docs/metrics.md lists them). They are
// registered eagerly, in the init context, so that thresholds naming them
// validate before the test starts.
type llmMetrics struct {
	ttfb, ttft, ttftAnswer, gap, tpot, tokensPerSec, e2e, parse *metrics.Metric
	serverQueue, serverPrefill                                  *metrics.Metric

	requests, attempts, errors, retries, reconnects, stalls   *metrics.Metric
	promptTokens, outputTokens, cachedTokens, reasoningTokens *metrics.Metric

	failed, cacheHit, goodput, regression, ttftLate *metrics.Metric

	gapsUnsampled                           *metrics.Metric // gaps the gapSampleRate cap kept out of llm_inter_token_gap
	clientLag, cost, connOpened, connReused *metrics.Metric
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
	dur, plain := metrics.Time, metrics.Default
	return []metricSpec{
		{"llm_ttfb", t, dur, &m.ttfb},
		{"llm_ttft", t, dur, &m.ttft},
		{"llm_ttft_answer", t, dur, &m.ttftAnswer},
		{"llm_inter_token_gap", t, dur, &m.gap},
		{"llm_tpot", t, dur, &m.tpot},
		{"llm_tokens_per_sec", t, plain, &m.tokensPerSec},
		{"llm_e2e", t, dur, &m.e2e},
		{"llm_client_parse_time", t, dur, &m.parse},
		{"llm_server_queue_time", t, dur, &m.serverQueue},
		{"llm_server_prefill_time", t, dur, &m.serverPrefill},
		{"llm_requests", c, plain, &m.requests},
		{"llm_attempts", c, plain, &m.attempts},
		{"llm_errors", c, plain, &m.errors},
		{"llm_retries", c, plain, &m.retries},
		{"llm_reconnects", c, plain, &m.reconnects},
		{"llm_stalls", c, plain, &m.stalls},
		{"llm_prompt_tokens", c, plain, &m.promptTokens},
		{"llm_output_tokens", c, plain, &m.outputTokens},
		{"llm_cached_tokens", c, plain, &m.cachedTokens},
		{"llm_reasoning_tokens", c, plain, &m.reasoningTokens},
		{"llm_gaps_unsampled", c, plain, &m.gapsUnsampled},
		{"llm_failed", r, plain, &m.failed},
		{"llm_cache_hit", r, plain, &m.cacheHit},
		{"llm_goodput", r, plain, &m.goodput},
		{"llm_regression", r, plain, &m.regression},
		{"llm_client_lag", t, dur, &m.clientLag},
		{"llm_ttft_late", r, plain, &m.ttftLate},
		{"llm_cost", c, plain, &m.cost},
		{"llm_conn_opened", c, plain, &m.connOpened},
		{"llm_conn_reused", r, plain, &m.connReused},
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
