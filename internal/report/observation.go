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

	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// Observation is one finished call, as the k6 module sees it. Durations < 0
// mean "not measured".
type Observation struct {
	Start, End                               time.Time
	Category, Model, Name, Scenario, Route   string // Category from the call's tags ("" = "default")
	OK                                       bool
	ErrorType                                string // "" when OK; else one of the error types of docs/metrics.md
	TTFB, TTFT, TTFTAnswer, E2E, TPOT        time.Duration
	ClientParse                              time.Duration
	Connect                                  time.Duration    // dial+TLS time spent by this call (0 when the connection was reused)
	Gaps                                     stream.Gaps      // every inter-token gap, whatever gapSamples says, as the call kept them
	TTFTCheck                                stream.TTFTCheck // whether this process made the TTFT late
	TokensPerSec                             float64          // per-request decode speed, 0 = not measured
	PromptTokens, OutputTokens, CachedTokens int64
	Cache                                    stream.CacheState
	Stalls                                   int
	Active                                   int // streams in flight in this process when the call started (concurrency)
	VUs                                      int // active VUs when the call started (for stages)
	// Rate is the arrival rate (iterations/s) an arrival-rate executor was
	// running at when the call started, 0 for other executors: with those,
	// the load level is the rate, not the VU count.
	Rate         float64
	SharedPrefix bool          // the prompt came from a shared-prefix dataset set (for cache_busted)
	EventLag     time.Duration // delay between an event's arrival and its JS callback (0 when no callback)
	// Starved counts idle timers that fired over 50 ms past their deadline: this
	// process, not the server, was not running (a CPU-starved load generator).
	Starved int
	// GapsUnsampled counts the call's gaps that gapSamples 'sampled' kept out
	// of k6's llm_inter_token_gap (Gaps still has them all).
	GapsUnsampled int

	// Phase is PhaseSetup or PhaseTeardown for calls made in setup() and
	// teardown(), "" during the test itself.
	Phase string
	// TestStart is when k6 started the test (zero when unknown): a warm-up
	// window is counted from it.
	TestStart time.Time
	// ItemID is the dataset item the prompt came from ("" when none): calls of
	// two clients on one item are compared pairwise.
	ItemID string
	// Tag looks up one of the call's k6 tags (nil: the call has none), for
	// leaving calls out by tag.
	Tag func(name string) (string, bool)
	// ClientLag is how late this process ran while the call did (the Go
	// scheduler's latency and timer lateness): time added to every timestamp.
	ClientLag time.Duration
	// Cost is the call's cost from its usage and the client's prices; Priced
	// is false when the client had none.
	Cost, CostSaved float64
	Currency        string
	Priced          bool
}

// DefaultCategory names calls that carry no category tag.
const DefaultCategory = "default"

// AllCategories is the row that aggregates every category.
const AllCategories = "all"

func (o *Observation) category() string {
	if o.Category == "" {
		return DefaultCategory
	}
	return o.Category
}

// concurrency is what defines a load stage: the VU count k6 reports, or the
// streams in flight when the executor does not tie VUs to concurrency.
func (o *Observation) concurrency() int {
	if o.VUs > 0 {
		return o.VUs
	}
	return o.Active
}

// level is the load the call started under: the arrival rate for
// arrival-rate executors (their VU count is a pool, not the load), else the
// concurrency.
func (o *Observation) level() float64 {
	if o.Rate > 0 {
		return o.Rate
	}
	return float64(o.concurrency())
}

// levelClass is the class of o.level(): rates and VU counts never share one.
func (o *Observation) levelClass() int {
	if o.Rate > 0 {
		return rateClass(o.Rate)
	}
	return concurrencyClass(o.concurrency())
}

// promptClass says whether the call had a long (≥ long) or short (≤ short)
// prompt, for the head-of-line rule. Token counts decide when known; otherwise
// the dataset category name does ("long_context" is long, "long_output" is not).
func (o *Observation) promptClass(short, long int64) (isShort, isLong bool) {
	if o.PromptTokens > 0 {
		return o.PromptTokens <= short, o.PromptTokens >= long
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
