package report

import (
	"math"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// A stage's throughput is what the service delivered while that load was on:
// completions and output tokens per second of wall time. Dividing the stage's
// own calls by the span of their start times is wrong twice over: a stray call
// that ends the test at this VU count (k6 winds VUs down one by one) stretches
// the span by the whole time the test spent at other levels, and the calls
// started last are still running when the span ends. So throughput is read off
// the timeline instead: the seconds in which every call that started belonged
// to the stage, counting what completed in them, after skipping one typical
// call duration at the start of each stretch, while completions still come
// from the previous load level.

// bucketClass is the concurrency class of the calls that started in a bucket,
// or -1 when they started at different levels (a step between stages).
func bucketClass(b *Bucket) int {
	lo, hi := b.ClassMin, b.ClassMax
	if lo != hi {
		return -1
	}
	return hi
}

// measureThroughput sets st.RequestsPerSec and st.OutputTokensPerSec.
func (r *Run) measureThroughput(st *Stage) {
	tl := r.Timeline
	buckets := func(d time.Duration) int { return int(math.Ceil(float64(d) / float64(tl.Width))) }
	skip, maxIdle := 1, 1
	if e2e := st.All.S(runrecord.MetricE2E); e2e.Count() > 0 {
		skip = max(1, buckets(time.Duration(q50(e2e)*float64(time.Millisecond))))
		// Seconds without a start are part of the stretch while a call may still
		// be running or the next one be thinking; beyond that the stage was over.
		pace := 3 * st.Steady / time.Duration(max(1, st.Calls)) // #nosec G115 -- a call count, far below 2^63
		maxIdle = 1 + buckets(max(time.Duration(e2e.Quantile(0.99)*float64(time.Millisecond)), pace))
	}
	var seconds float64
	var completed uint64
	var tokens int64
	for i := 0; i < len(tl.Buckets); {
		if b := &tl.Buckets[i]; b.Requests == 0 || bucketClass(b) != st.Class {
			i++
			continue
		}
		// A stretch runs to the last bucket where calls of this stage started;
		// a few seconds without any start (long calls) do not end it.
		first, last, j := i, i, i+1
		for ; j < len(tl.Buckets) && j-last <= maxIdle; j++ {
			b := &tl.Buckets[j]
			if b.Requests == 0 {
				continue
			}
			if bucketClass(b) != st.Class {
				break
			}
			last = j
		}
		for k := first + skip; k <= last; k++ {
			seconds += tl.Width.Seconds()
			completed += tl.Buckets[k].Completed
			tokens += tl.Buckets[k].OutputTokens
		}
		i = j
	}
	if seconds == 0 {
		// Stretches shorter than one call: the start span is all there is.
		seconds = st.Steady.Seconds()
		completed, tokens = st.All.Requests, st.All.OutputTokens
	}
	st.RequestsPerSec = float64(completed) / seconds
	st.OutputTokensPerSec = float64(tokens) / seconds
}
