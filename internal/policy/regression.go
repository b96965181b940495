package policy

import "time"

// The margin a call's TTFT must exceed the baseline's P95 by before the call
// counts as a regression (llm_regression): a tenth of that P95, and never
// less than 10 ms. A verdict on one call has no interval, so without a margin
// a narrow TTFT distribution (a fast model, a simulator, a cache-warm gateway,
// whose P95 sits a few ms above its median) turns a few ms of machine noise
// between the two runs into half the calls "regressed". The report's
// comparison of whole distributions, which has intervals, sees smaller
// changes.
const (
	RegressionMargin      = 0.10
	RegressionMarginFloor = 10 * time.Millisecond
)

// SlowerThanBaseline says whether a call's TTFT regressed against the
// baseline's P95 for its class: above it by more than the margin.
func SlowerThanBaseline(ttft, baselineP95 time.Duration) bool {
	margin := max(time.Duration(RegressionMargin*float64(baselineP95)), RegressionMarginFloor)
	return ttft > baselineP95+margin
}
