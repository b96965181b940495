package report

import (
	"fmt"
	"time"
)

// Options tune a Collector. The zero value is usable.
type Options struct {
	// Start is the test start; the timeline begins there (zero: at the first call).
	Start time.Time
	// MaxBuckets caps the timeline; beyond it neighbouring buckets merge (default 3600).
	MaxBuckets int
	// ReservoirSize is how many calls per category are kept for the bootstrap (default 2000).
	ReservoirSize int
	// Seed makes the reservoirs and the bootstrap reproducible (default 1).
	Seed uint64
	// ShortPromptTokens / LongPromptTokens classify prompts for the head-of-line
	// rule when the server reports prompt tokens (defaults 500 and 2000).
	ShortPromptTokens, LongPromptTokens int64
	// MinStage is how long calls must keep starting at one concurrency for it
	// to be a stage. Zero: relative to the calls themselves, stageCallSpans
	// median call durations and at least minStageFloor (collect_stages.go).
	MinStage time.Duration
	// Exclude says which calls stay out of the report (warm-up, scenarios, tags, setup/teardown).
	Exclude Exclude
}

// Validate names the first option that cannot be applied.
func (o Options) Validate() error {
	if o.MinStage < 0 {
		return fmt.Errorf("minStage must not be negative (got %s)", o.MinStage)
	}
	return o.Exclude.validate()
}

func (o Options) withDefaults() Options {
	if o.MaxBuckets <= 0 {
		o.MaxBuckets = 3600
	}
	if o.ReservoirSize <= 0 {
		o.ReservoirSize = 2000
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.ShortPromptTokens <= 0 {
		o.ShortPromptTokens = 500
	}
	if o.LongPromptTokens <= 0 {
		o.LongPromptTokens = 2000
	}
	return o
}
