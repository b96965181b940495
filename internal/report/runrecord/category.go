package runrecord

import (
	"math"

	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
)

// CategoryRecord summarises one category.
type CategoryRecord struct {
	Requests     uint64                   `json:"requests"`
	Failures     uint64                   `json:"failures"`
	Errors       map[string]uint64        `json:"errors,omitempty"`
	CacheHitRate *float64                 `json:"cache_hit_rate,omitempty"`
	CacheHits    uint64                   `json:"cache_hits"`
	CacheMisses  uint64                   `json:"cache_misses"`
	Stalls       uint64                   `json:"stalls"`
	OutputTokens int64                    `json:"output_tokens"`
	Metrics      map[string]*MetricRecord `json:"metrics"`
	Cost         *CostRecord              `json:"cost,omitempty"` // only when the client had prices
	// GapsUnsampled: gaps the gap-sample cap kept out of k6's llm_inter_token_gap.
	GapsUnsampled uint64 `json:"gaps_unsampled,omitempty"`
	// FinishOmitted: complete answers whose server named no finish reason.
	FinishOmitted uint64 `json:"finish_omitted,omitempty"`
	// Samples is a uniform random sample of successful calls (reservoir), per
	// metric name ("ttft", "e2e", "tpot"), in ms: the bootstrap resamples it.
	Samples     map[string][]float64 `json:"samples,omitempty"`
	SamplesSeen uint64               `json:"samples_seen,omitempty"`
	// Tallies are the group's other exact counters (absent from records
	// written before they were kept: then the rules that read them stay
	// silent on a merged record).
	Tallies *Tallies `json:"tallies,omitempty"`
	// Slowest are the category's slowest answered calls by E2E that
	// carried a trace context (the client's tracing option), with their
	// trace ids: absent without tracing.
	Slowest SlowCalls `json:"slowest_calls,omitempty"`
}

// MetricRecord is one distribution: headline figures plus the full sketch.
type MetricRecord struct {
	Count  uint64         `json:"count"`
	Mean   float64        `json:"mean"`
	P50    float64        `json:"p50"`
	P95    float64        `json:"p95"`
	P99    float64        `json:"p99"`
	Min    float64        `json:"min"`
	Max    float64        `json:"max"`
	Sketch *sketch.Sketch `json:"sketch"`
	// The percentiles' 95 % intervals (CI), and the percentiles whose
	// interval the calls leave open ("p99" from fewer than 368 calls).
	// Absent from records written before intervals were kept.
	P50CI  *CI      `json:"p50_ci,omitempty"`
	P95CI  *CI      `json:"p95_ci,omitempty"`
	P99CI  *CI      `json:"p99_ci,omitempty"`
	TooFew []string `json:"too_few,omitempty"`
}

// StageRecord is one load stage of the run.
type StageRecord struct {
	Concurrency        float64 `json:"concurrency"`       // VUs, or the arrival rate when by_rate
	ByRate             bool    `json:"by_rate,omitempty"` // the stage is an arrival rate (requests/s)
	Calls              uint64  `json:"calls"`
	SteadySeconds      float64 `json:"steady_seconds"`
	TTFTP50            float64 `json:"ttft_p50"`
	TTFTP95            float64 `json:"ttft_p95"`
	TokensPerSecP50    float64 `json:"tokens_per_sec_p50"`
	RequestsPerSec     float64 `json:"requests_per_sec"`
	OutputTokensPerSec float64 `json:"output_tokens_per_sec"`
	// The percentiles' 95 % intervals and those resting on too few calls
	// ("ttft_p95"), as in MetricRecord.
	TTFTP50CI         *CI      `json:"ttft_p50_ci,omitempty"`
	TTFTP95CI         *CI      `json:"ttft_p95_ci,omitempty"`
	TokensPerSecP50CI *CI      `json:"tokens_per_sec_p50_ci,omitempty"`
	TooFew            []string `json:"too_few,omitempty"`
}

// AllCategories is the row that aggregates every category.
const AllCategories = "all"

// FiniteOr0 is v, or 0 when v is NaN or infinite: JSON has neither, so a figure
// the record cannot state is stored as 0.
func FiniteOr0(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}
