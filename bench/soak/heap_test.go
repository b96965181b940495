package main

import (
	"testing"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/require"
)

// A heap profile with one stack through TrendSink.Add (inlined into the
// ingester, as Go lists inlined calls) and two others: the Trend store is the
// one, everything else the rest; for k6 v1 and for v2, whose packages are under
// go.k6.io/k6/v2 (raw strings: the port's rewrite in scripts/k6v2.sh changes
// quoted k6 import paths, and these are function names, not imports).
func TestSplitHeapFindsTheTrendStore(t *testing.T) {
	t.Parallel()
	for _, k6 := range []string{`go.k6.io/k6`, `go.k6.io/k6/v2`} {
		fn := func(id uint64, name string) *profile.Function { return &profile.Function{ID: id, Name: name} }
		add, ingest := fn(1, k6+"/metrics.(*TrendSink).Add"), fn(2, k6+"/internal/metrics/engine.(*outputIngester).flushMetrics")
		stream, goja := fn(3, "github.com/llmstream/xk6-llmstream/internal/stream.(*Reader).Next"), fn(4, "github.com/grafana/sobek.(*Runtime).New")
		inlined := &profile.Location{ID: 1, Line: []profile.Line{{Function: add}, {Function: ingest}}}
		p := &profile.Profile{
			SampleType: []*profile.ValueType{{Type: "alloc_space"}, {Type: "inuse_space"}},
			Sample: []*profile.Sample{
				{Value: []int64{999, 3 << 20}, Location: []*profile.Location{inlined}},
				{Value: []int64{999, 5 << 20}, Location: []*profile.Location{{ID: 2, Line: []profile.Line{{Function: stream}}}}},
				{Value: []int64{999, 1 << 20}, Location: []*profile.Location{{ID: 3, Line: []profile.Line{{Function: goja}}}}},
			},
		}
		h := splitHeap(p, 1)
		require.Equal(t, int64(9<<20), h.total, k6)
		require.Equal(t, int64(3<<20), h.trend, k6)
		require.Equal(t, int64(6<<20), h.other(), k6)
	}
}
