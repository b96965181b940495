// Package report turns the calls of a k6 run into "where the time went": bounded,
// mergeable statistics per category, model and load stage, a diagnosis, a
// comparison with a stored baseline, and text / HTML / JSON renderings.
//
// Nothing here imports k6: the module feeds one Observation per finished call to
// a Collector and renders a Snapshot in handleSummary.
package report

import (
	"strings"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/record"
)

// Observation is one finished call, as the k6 module records it: the call's
// one record (package record), read here as it is. Durations < 0 mean "not
// measured".
type Observation = record.Call

// DefaultCategory names calls that carry no category tag.
const DefaultCategory = "default"

func category(o *Observation) string {
	if o.Category == "" {
		return DefaultCategory
	}
	return o.Category
}

// concurrency is what defines a load stage: the VU count k6 reports, or the
// streams in flight when the executor does not tie VUs to concurrency.
func concurrency(o *Observation) int {
	if o.VUs > 0 {
		return o.VUs
	}
	return o.Active
}

// level is the load the call started under: the arrival rate for
// arrival-rate executors (their VU count is a pool, not the load), else the
// concurrency.
func level(o *Observation) float64 {
	if o.Rate > 0 {
		return o.Rate
	}
	return float64(concurrency(o))
}

// levelClass is the class of level(o): rates and VU counts never share one.
func levelClass(o *Observation) int {
	if o.Rate > 0 {
		return rateClass(o.Rate)
	}
	return concurrencyClass(concurrency(o))
}

// promptClass says whether the call had a long (≥ long) or short (≤ short)
// prompt, for the head-of-line rule. Token counts decide when known; otherwise
// the dataset category name does ("long_context" is long, "long_output" is not).
func promptClass(o *Observation, short, long int64) (isShort, isLong bool) {
	if o.PromptTokens() > 0 {
		return o.PromptTokens() <= short, o.PromptTokens() >= long
	}
	c := strings.ToLower(o.Category)
	isLong = strings.Contains(c, "long") && !strings.Contains(c, "output")
	isShort = strings.Contains(c, "short")
	return isShort, isLong
}

// ms converts a measured duration to the milliseconds the sketches keep;
// ok is false for "not measured".
func ms(d time.Duration) (float64, bool) {
	if d < 0 {
		return 0, false
	}
	return float64(d) / float64(time.Millisecond), true
}
