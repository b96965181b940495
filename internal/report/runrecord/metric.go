package runrecord

// Metric names one distribution kept per group. The names are the JSON keys of
// the run record and the metric argument of Record.P95, so they are stable.
type Metric int

var metricNames = [NumMetrics]string{ //nolint:gochecknoglobals // read-only table
	"ttfb", "ttft", "ttft_answer", "e2e", "gap", "tpot", "tokens_per_sec",
	"client_parse", "connect", "event_lag", "network_share", "ttft_cache_hit", "ttft_cache_miss", "client_lag",
	"dispatch_delay", "ttft_from_due", "e2e_from_due",
}

func (m Metric) String() string { return metricNames[m] }

// MetricByName resolves a record/metric name; ok is false for unknown names.
func MetricByName(name string) (Metric, bool) {
	for i, n := range metricNames {
		if n == name {
			return Metric(i), true
		}
	}
	return 0, false
}

// IsDuration says whether the metric is a time (ms), for formatting.
func (m Metric) IsDuration() bool { return m != MetricTokensPerSec && m != MetricNetworkShare }

// The distributions kept for every (category, model, stage). Durations are in
// milliseconds; tokens_per_sec in tokens/s; network_share is a fraction.
const (
	MetricTTFB Metric = iota
	MetricTTFT
	MetricTTFTAnswer
	MetricE2E
	MetricGap
	MetricTPOT
	MetricTokensPerSec
	MetricClientParse
	MetricConnect
	MetricEventLag
	MetricNetworkShare
	MetricTTFTCacheHit
	MetricTTFTCacheMiss
	MetricClientLag
	// The due-time figures of calls a schedule asked for (record.Call.Due):
	// send − due, and TTFT and E2E counted from the due time.
	MetricDispatchDelay
	MetricTTFTFromDue
	MetricE2EFromDue
	NumMetrics
)

// SampledMetrics are the metrics a record keeps raw samples of.
var SampledMetrics = []Metric{MetricTTFT, MetricE2E, MetricTPOT} //nolint:gochecknoglobals // read-only table
