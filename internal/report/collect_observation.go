// Package report turns the calls of a k6 run into "where the time went": bounded,
// mergeable statistics per category, model and load stage, a diagnosis, a
// comparison with a stored baseline, and text / HTML / JSON renderings.
//
// Nothing here imports k6: the module feeds one Observation per finished call to
// a Collector and renders a Snapshot in handleSummary.
package report

import (
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// Observation is one finished call, as the k6 module records it: the call's
// one record (package record), read here as it is: a figure it could not
// measure is a measure.Duration that is not known.
type Observation = record.Call

// DefaultCategory names calls that carry no category tag.
const DefaultCategory = "default"

func category(o *Observation) string {
	if o.Category == "" {
		return DefaultCategory
	}
	return o.Category
}

// cutByStop says the test's stop cut the call in flight: a failed call of
// its own type, and nothing of it is a figure (what it timed describes when
// the test stopped, not the service), nor a sample k6 got.
func cutByStop(o *Observation) bool {
	return o.ErrorType() == string(stream.ErrCanceled)
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

// concurrencyClass maps a VU count to its class: exact up to 20, then a 5 %
// logarithmic grid, so a ramp to 10 000 VUs makes at most ~130 classes.
func concurrencyClass(v int) int {
	if v <= 20 {
		return max(v, 0)
	}
	return 20 + int(math.Round(math.Log(float64(v)/20)/math.Log(1.05)))
}

// rateClassBase keeps the classes of arrival rates apart from VU counts.
const rateClassBase = 1 << 20

// rateClass maps an arrival rate to its class: a 5 % logarithmic grid.
func rateClass(r float64) int {
	return rateClassBase + int(math.Round(math.Log(r)/math.Log(1.05)))
}

// isRateClass says whether a class is one of arrival rates.
func isRateClass(c int) bool { return c >= rateClassBase/2 }

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
