package load

import (
	"context"
	"time"

	"go.k6.io/k6/lib"
	"go.k6.io/k6/metrics"

	"github.com/llmstream/xk6-llmstream/binding/k6env"
	"github.com/llmstream/xk6-llmstream/internal/schedule"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// A schedule's credits that were due but never sent are failed calls in
// k6's metrics too (llm_requests, llm_failed, llm_errors, error_type
// dropped), so a threshold such as llm_failed: ['rate<0.01'] reads them. They
// become dropped only when the test stops: until then a credit nobody
// claimed is late, and the next free VU takes it.

// droppedMetrics are the call-level figures' metrics a dropped credit
// counts in, looked up once by name in the figure table.
var droppedMetrics = [...]string{"llm_requests", "llm_failed", "llm_errors"} //nolint:gochecknoglobals // read-only

// droppedSamples are n dropped credits' samples at one moment: value 1 in
// each of droppedMetrics (a failed call adds 1 to all three), with tags.
func droppedSamples(m *k6env.LLMMetrics, n int, at time.Time, tags *metrics.TagSet, meta map[string]string) metrics.Samples {
	out := make(metrics.Samples, 0, n*len(droppedMetrics))
	for _, name := range droppedMetrics {
		metric := m.MetricNamed(name)
		if metric == nil {
			continue
		}
		for range n {
			out = append(out, metrics.Sample{
				TimeSeries: metrics.TimeSeries{Metric: metric, Tags: tags}, Time: at, Metadata: meta, Value: 1,
			})
		}
	}
	return out
}

// dropOwed is what a VU does when it finds the test stopping (in next(), or
// in the call of the credit it took): every credit of this instance due
// before the stop and never claimed is handed over to it, once whichever VU
// comes first, and pushed as failed calls with the VU's tags (k6's scenario
// and group, as systemTags keeps them) and error_type dropped. The push is
// made from inside the VU's iteration, which k6 waits for before it stops
// reading samples, as it does for the iteration's own data_sent. A credit
// dropped after the last VU stopped asking (every VU between iterations when
// the test ended) is in the report's account, not in k6's metrics.
func dropOwed(s *schedule.Schedule, m *k6env.LLMMetrics, st *lib.State) {
	owed := s.Abandon()
	if len(owed) == 0 || m == nil || st == nil {
		return
	}
	tm := st.Tags.GetCurrentValues()
	tags := tm.Tags.With("error_type", string(stream.ErrDropped))
	t := time.NewTimer(droppedPushWait)
	defer t.Stop()
	select {
	case st.Samples <- droppedSamples(m, len(owed), time.Now(), tags, tm.Metadata):
	case <-t.C: // nobody reads samples any more (not a k6 run): the report still has them
		if st.Logger != nil {
			st.Logger.Warnf("llmstream: %d dropped schedule credits could not be pushed to k6's metrics", len(owed))
		}
	}
}

// droppedPushWait bounds the push of dropped credits: k6 reads samples
// until every VU's iteration returned, so it only ever runs out outside a
// k6 run.
const droppedPushWait = 5 * time.Second

// afterScheduledCall is the end of a call a schedule's credit asked for
// (from, nil for other calls). When the test's stop cut it short, or its
// scenario starts no iteration any more (its duration is over, and k6 only
// lets the iterations in flight finish), its VU will not ask the schedule
// again and finds the test stopping, as next() would.
func AfterScheduledCall(ctx context.Context, from *schedule.Schedule, m *k6env.LLMMetrics, st *lib.State) {
	if from != nil && (ctx.Err() != nil || k6env.ScenarioOver(ctx)) {
		dropOwed(from, m, st)
	}
}
