package servermetrics

// MetricKind is how k6 aggregates an llm_server_* metric.
type MetricKind int

// Kinds. Gauges are Trends, not k6 Gauges: a k6 Gauge keeps only its last,
// min and max value, while a Trend of one sample per scrape makes p(95) and
// avg thresholds mean "over the run's time".
const (
	KindTrend MetricKind = iota
	KindCounter
)

// What a metric's sample is read from in a Sample.
const (
	fromGauge      = iota // the gauge as scraped
	fromCounter           // the increase since the previous scrape
	fromMean              // Δsum/Δcount of a histogram since the previous scrape
	fromLatency           // how long the scrape took
	fromRun               // a figure of the whole run, sent once at its end
	fromSpecRate          // Δaccepted ÷ Δdraft tokens since the previous scrape
	fromSpecLength        // 1 + Δaccepted ÷ Δdrafts since the previous scrape
)

// Run figures, sent once at the end of the test (Sample.Run): energy per
// output token and per request need the run's totals of two endpoints.
const (
	RunEnergyPerOutput = "j_per_output_token"
	RunJPerRequest     = "j_per_request"
)

// Metric is one llm_server_* k6 metric (docs/metrics.md lists them).
type Metric struct {
	Name     string
	Kind     MetricKind
	Time     bool // a duration, sent in milliseconds
	Quantity string
	from     int
}

// Metrics are the k6 metrics a scrape feeds, in registration order.
var Metrics = []Metric{ //nolint:gochecknoglobals // read-only table
	{Name: "llm_server_requests_waiting", Quantity: RequestsWaiting, from: fromGauge},
	{Name: "llm_server_requests_running", Quantity: RequestsRunning, from: fromGauge},
	{Name: "llm_server_kv_cache_usage", Quantity: KVCacheUsage, from: fromGauge},
	{Name: "llm_server_ttft_mean", Time: true, Quantity: TTFT, from: fromMean},
	{Name: "llm_server_queue_mean", Time: true, Quantity: Queue, from: fromMean},
	{Name: "llm_server_prefill_mean", Time: true, Quantity: Prefill, from: fromMean},
	{Name: "llm_server_decode_mean", Time: true, Quantity: Decode, from: fromMean},
	{Name: "llm_server_requests_finished", Kind: KindCounter, Quantity: RequestsFinished, from: fromCounter},
	{Name: "llm_server_prompt_tokens", Kind: KindCounter, Quantity: PromptTokens, from: fromCounter},
	{Name: "llm_server_generation_tokens", Kind: KindCounter, Quantity: GenerationTokens, from: fromCounter},
	{Name: "llm_server_preemptions", Kind: KindCounter, Quantity: Preemptions, from: fromCounter},
	{Name: "llm_server_scrape_duration", Time: true, from: fromLatency},
	{Name: "llm_server_gpu_power", Quantity: GPUPower, from: fromGauge},
	{Name: "llm_server_energy", Kind: KindCounter, Quantity: Energy, from: fromCounter},
	{Name: "llm_server_energy_per_output_token", Quantity: RunEnergyPerOutput, from: fromRun},
	{Name: "llm_server_energy_per_request", Quantity: RunJPerRequest, from: fromRun},
	{Name: "llm_server_spec_acceptance", Quantity: SpecAcceptedTokens, from: fromSpecRate},
	{Name: "llm_server_spec_acceptance_length", Quantity: SpecAcceptedTokens, from: fromSpecLength},
}

// Value is the metric's sample from one scrape; ok is false when the scrape
// has none (the endpoint does not expose the quantity, nothing finished in
// the interval, or it is the first scrape and nothing can have moved yet).
// A counter that did not move gives 0: the run total stays exact.
func (m Metric) Value(s Sample) (v float64, ok bool) {
	switch m.from {
	case fromGauge:
		v, ok = s.Gauges[m.Quantity]
	case fromCounter:
		v, ok = s.Counters[m.Quantity]
	case fromMean:
		v, ok = s.Means[m.Quantity]
		v *= 1e3
	case fromLatency:
		v, ok = float64(s.Latency.Microseconds())/1e3, s.Run == nil
	case fromRun:
		v, ok = s.Run[m.Quantity]
	case fromSpecRate, fromSpecLength:
		per := SpecDraftTokens
		if m.from == fromSpecLength {
			per = SpecDrafts
		}
		a, okA := s.Counters[SpecAcceptedTokens]
		d, okD := s.Counters[per]
		if ok = okA && okD && d > 0; ok {
			v = a / d
			if m.from == fromSpecLength {
				v++
			}
		}
	}
	return v, ok
}
