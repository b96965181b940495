package calls

import (
	"maps"
	"sync"
	"time"

	"go.k6.io/k6/metrics"

	"github.com/llmstream/xk6-llmstream/binding/k6env"
	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/record"
)

// A finished call's k6 samples, and a finished job's: one batch each, built
// from the figure table (internal/record), each sample at the moment it
// describes and, for a call, with the tags of the attempt it describes.

// callSamples builds the whole batch of one call from the figure table, each
// sample at the moment it describes, so k6 pushes it in one channel send:
// one llm_attempts sample per attempt (tagged by its route and number), then
// the call's figures, tagged by the attempt that ended it.
func callSamples(m *k6env.LLMMetrics, o *outcome, rec *record.Call) metrics.Samples {
	table, byRow, lastFixed := m.Table(rec)
	b := batches.Get().(*batch) //nolint:forcetypeassert // the pool holds nothing else
	defer b.put()
	b.out = make(metrics.Samples, 0, batchSize(int(lastFixed.Load()), rec))
	final := len(o.Attempts)
	callTags, callMeta := attemptTags(o.Final(), final)
	emit := b.emit
	// b is on the heap: each pointer stored in it costs a write barrier
	// while the GC marks, so the call's tags are set once, the metric only
	// for a row that has one.
	b.tags, b.meta = callTags, callMeta
	for i := range table {
		m := byRow[i]
		if m == nil {
			continue
		}
		b.metric = m
		f := &table[i]
		if f.PerAttempt {
			for n := range o.Attempts {
				b.tags, b.meta = callTags, callMeta
				if n+1 != final {
					b.tags, b.meta = attemptTags(&o.Attempts[n], n+1)
				}
				b.add(o.Attempts[n].Result.End, 1)
			}
			continue // the final attempt's tags are the call's
		}
		f.Samples(rec, emit)
	}
	// Calls of a test mostly end alike: the next batch is sized as this
	// one was (a call that has more grows its batch once).
	if fixed := int32(max(len(b.out)-batchSize(0, rec), 0)); fixed != lastFixed.Load() { // #nosec G115 -- a batch's length fits
		lastFixed.Store(fixed)
	}
	return b.out
}

// jobSamples are a job's samples, one per figure it has, with the job's tags.
func jobSamples(m *k6env.LLMMetrics, j *record.Job, tags *metrics.TagSet) metrics.Samples {
	b := &batch{out: make(metrics.Samples, 0, len(record.JobFigures)), tags: tags}
	for i := range record.JobFigures {
		if b.metric = m.ByJob[i]; b.metric != nil {
			record.JobFigures[i].Samples(j, b.add)
		}
	}
	return b.out
}

// batch is a record's samples as they are built: each figure's go to its
// metric, with the tags set for them. emit is its add, for the figures.
type batch struct {
	out    metrics.Samples
	metric *metrics.Metric
	tags   *metrics.TagSet
	meta   map[string]string
	emit   record.Emit
}

// batches are the batches calls build their samples with: a batch and its
// emitter (a method value) were two allocations of every call, while the
// samples they build are handed to k6 and never come back.
var batches = sync.Pool{New: func() any { //nolint:gochecknoglobals // a pool shared by every call is the point
	b := &batch{}
	b.emit = b.add // one emitter for every figure: a closure per figure would allocate for each figure of every call
	return b
}}

// put returns b to the pool, holding none of its call's samples or tags.
func (b *batch) put() {
	b.out, b.metric, b.tags, b.meta = nil, nil, nil, nil
	batches.Put(b)
}

func (b *batch) add(at time.Time, v float64) {
	b.out = append(b.out, metrics.Sample{
		TimeSeries: metrics.TimeSeries{Metric: b.metric, Tags: b.tags},
		Time:       at, Metadata: b.meta, Value: v,
	})
}

// batchSize is what a call's batch will hold: its figures' samples
// (figures), one sample per attempt and the gaps k6 gets (with 'sampled',
// the kept ones only: most gaps are not sent, and a batch sized for them
// all would be mostly empty, and the count of the others when there are
// any: counted with the figures, a call that left a gap out after one that
// kept them all would outgrow a batch sized as the last).
func batchSize(figures int, rec *record.Call) int {
	n := figures + len(rec.Attempts)
	switch rec.GapSamples {
	case config.GapsPerEvent:
		n += len(rec.Gaps)
	case config.GapsSampled:
		n += len(rec.Gaps) - rec.GapsUnsampled
		if rec.GapsUnsampled > 0 {
			n++ // llm_gaps_unsampled
		}
	}
	return n
}

// attemptTags are the samples' tags of attempt n of a call (and of the call,
// from the attempt that ended it): the call's tags, the client's, the route
// when the client has a fallback, the status, cache state and error type
// (tag_memo.go builds them), and the call's metadata with its request id.
func attemptTags(a *attempt, n int) (*metrics.TagSet, map[string]string) {
	r, info := a.Result, a.Route.Info
	key := attemptTagKey{
		base: info.tags.Tags, systemTags: info.systemTags,
		protocol: info.Protocol, name: info.Name, model: info.Model, route: info.Route, tagRoute: info.tagRoute,
		cache: r.Cache.String(), proto: knownProto(r.Proto), failed: !r.OK, status: r.Status, attempt: n,
	}
	if !r.OK {
		key.errorType = string(r.Err.Type)
	}
	meta := info.tags.Metadata
	if r.RequestID != "" {
		meta = maps.Clone(meta)
		if meta == nil {
			meta = make(map[string]string, 1)
		}
		meta["request_id"] = r.RequestID
	}
	return info.tagMemo.get(&key), meta
}
