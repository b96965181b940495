package runrecord

// WaveRecord is a wave in the run record. Times are seconds into the run.
type WaveRecord struct {
	StartSeconds    float64  `json:"start_seconds"`
	EndSeconds      float64  `json:"end_seconds"`
	Base            float64  `json:"base_concurrency"`
	Peak            float64  `json:"peak_concurrency"`
	BeforeTTFTP50   float64  `json:"before_ttft_p50"`
	PeakTTFTP50     float64  `json:"peak_ttft_p50"`
	RecoveryLimitMS float64  `json:"recovery_limit_ms"`
	Recovered       bool     `json:"recovered"`
	RecoverySeconds *float64 `json:"recovery_seconds"` // null when it did not recover
	ObservedAfter   float64  `json:"observed_after_seconds"`
	Text            string   `json:"text"`
}

// RetrievalRecord is one embed or rerank group in the run record.
type RetrievalRecord struct {
	Op       string            `json:"op"`
	Category string            `json:"category"`
	Load     float64           `json:"load"`              // mean VUs, or iterations/s when by_rate
	ByRate   bool              `json:"by_rate,omitempty"` // the load is an arrival rate
	Calls    uint64            `json:"calls"`
	Failed   uint64            `json:"failed"`
	Errors   map[string]uint64 `json:"errors,omitempty"`
	// Metrics are duration (answered calls), ttfb, parse (every call that
	// measured them) and, for calls a schedule asked for, dispatch_delay and
	// e2e_from_due, in ms.
	Metrics map[string]*MetricRecord `json:"metrics"`
	// BatchMean is the answered calls' mean batch (inputs or documents).
	BatchMean *float64 `json:"batch_mean,omitempty"`
	// InputTokens are the answered calls' counted input tokens;
	// InputTokensPerSec is them over the group's span (nil when uncounted).
	InputTokens       int64    `json:"input_tokens"`
	InputTokensPerSec *float64 `json:"input_tokens_per_sec,omitempty"`
	RequestBytes      int64    `json:"request_bytes"`
}

// ImageRecord is one group of TTFT by images in the run record.
type ImageRecord struct {
	Images int           `json:"images"`         // 5 stands for five or more; 0 for prompts without
	Size   string        `json:"size,omitempty"` // the class of the prompt's total pixels
	Calls  uint64        `json:"calls"`
	Bytes  int64         `json:"image_bytes"` // the pictures' encoded bytes, summed
	TTFT   *MetricRecord `json:"ttft"`
}
