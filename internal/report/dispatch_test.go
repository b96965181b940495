package report

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/protocol"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// scheduled is a call a schedule asked for, sent lateMS after it was due.
func scheduled(i int, lateMS float64) *Observation {
	start := t0.Add(time.Duration(i) * 50 * time.Millisecond)
	o := call(start, "", 200)
	o.Due = start.Add(-msD(lateMS))
	return o
}

func runOf(obs ...*Observation) *Run {
	c := NewCollector(Options{})
	for _, o := range obs {
		c.Add(o)
	}
	return c.Snapshot()
}

func TestDueTimeFiguresAreKeptApart(t *testing.T) {
	var obs []*Observation
	for i := range 40 {
		obs = append(obs, scheduled(i, 30))
	}
	obs = append(obs, call(t0, "", 200)) // a closed-model call: no due time
	all := runOf(obs...).Category(runrecord.AllCategories)
	require.Equal(t, uint64(40), all.S(record.DistDispatchDelay).Count(), "only calls with a due time")
	require.InEpsilon(t, 30, all.S(record.DistDispatchDelay).Quantile(0.5), 0.02)
	require.InEpsilon(t, 230, all.S(record.DistTTFTFromDue).Quantile(0.5), 0.02, "TTFT from the due time includes the lateness")
	require.InEpsilon(t, 200, all.S(record.DistTTFT).Quantile(0.5), 0.02, "TTFT from the send does not")
	require.InEpsilon(t, 730, all.S(record.DistE2EFromDue).Quantile(0.5), 0.02)
}

func TestGeneratorBehind(t *testing.T) {
	onTime := func() []*Observation {
		var obs []*Observation
		for i := range 40 {
			obs = append(obs, scheduled(i, 2))
		}
		return obs
	}
	// On time, nothing dropped: no finding.
	r := runOf(onTime()...)
	r.SetDispatch(&runrecord.Dispatch{Schedules: []runrecord.ScheduleStats{{Name: "poisson", Kind: "poisson", Claimed: 40}}})
	require.NotContains(t, ids(Diagnose(r)), "generator_behind")
	require.NotContains(t, RenderText(r, nil, nil), "percentiles omit")

	// Late beyond the bound (50 ms; 10 % of a 200 ms TTFT is less).
	var late []*Observation
	for i := range 40 {
		late = append(late, scheduled(i, 80))
	}
	fs := Diagnose(runOf(late...))
	require.Contains(t, ids(fs), "generator_behind")

	// Dropped credits and k6's dropped iterations, each alone.
	for _, d := range []*runrecord.Dispatch{
		{Schedules: []runrecord.ScheduleStats{{Name: "poisson", Kind: "poisson", Claimed: 40, Dropped: 7}}},
		{K6Dropped: ptr(12.0)},
	} {
		r := runOf(onTime()...)
		r.SetDispatch(d)
		fs := Diagnose(r)
		i := slices.IndexFunc(fs, func(f runrecord.Finding) bool { return f.ID == "generator_behind" })
		require.GreaterOrEqual(t, i, 0)
		text := RenderText(r, fs, nil)
		require.Contains(t, text, "percentiles omit")
		_, _, rec, err := Render(r, nil, RenderOptions{})
		require.NoError(t, err)
		var parsed struct {
			Dispatch *runrecord.Dispatch `json:"dispatch"`
		}
		require.NoError(t, json.Unmarshal(rec, &parsed))
		require.NotNil(t, parsed.Dispatch, "the run record carries the account")
		require.True(t, strings.Contains(text, "7 schedule credits") || strings.Contains(text, "12 k6 dropped_iterations"), text)
	}
	require.InDelta(t, 50, DispatchBoundMS(100), 0)
	require.InDelta(t, 200, DispatchBoundMS(2000), 0)
}

func ptr[T any](v T) *T { return &v }

// TestK6ShortfallIsShown: k6 dropped iterations because it had too few VUs;
// the headline and the finding say how many it had and about how many the
// offered load needed (Little's law), and nothing is made up without the
// figures.
func TestK6ShortfallIsShown(t *testing.T) {
	// 60 run + 540 dropped over 3 s: 200 iterations/s offered, 1 s each.
	f := runrecord.NewVUShortfall(2, 60, 540, 3, 1)
	require.NotNil(t, f)
	require.InDelta(t, 200, f.OfferedRate, 1e-9)
	require.InDelta(t, 200, f.NeededVUs, 0)
	require.Nil(t, runrecord.NewVUShortfall(0, 60, 540, 3, 1), "no vus_max: unknown")
	require.Nil(t, runrecord.NewVUShortfall(2, 60, 0, 3, 1), "nothing dropped: no shortfall")

	r := runOf(call(t0, "", 100))
	r.SetDispatch(&runrecord.Dispatch{K6Dropped: ptr(540.0), K6Shortfall: f})
	fs := Diagnose(r)
	text := RenderText(r, fs, nil)
	require.Contains(t, text, "had 2 VUs at most")
	require.Contains(t, text, "needs about 200")
	i := slices.IndexFunc(fs, func(f runrecord.Finding) bool { return f.ID == "generator_behind" })
	require.GreaterOrEqual(t, i, 0)
	require.InDelta(t, 200, fs[i].Values["k6_needed_vus"], 0)
}

// TestTraceReuseBesideWhatWasSeen: the reuse a trace predicts is printed
// next to the cached share of prompt tokens the servers reported, or says
// there is nothing to compare.
func TestTraceReuseBesideWhatWasSeen(t *testing.T) {
	reuse := 0.5
	d := &runrecord.Dispatch{Schedules: []runrecord.ScheduleStats{{Name: "t.jsonl", Kind: "trace", Claimed: 2, Trace: "trace t.jsonl", PrefixReuse: &reuse}}}
	hit, miss := call(t0, "", 100), call(t0.Add(time.Second), "", 100)
	hit.Usage = &protocol.Usage{PromptTokens: 1000, CachedTokens: 800, CachedReported: true}
	hit.Cache = stream.CacheHit
	miss.Usage = &protocol.Usage{PromptTokens: 1000, CachedReported: true}
	miss.Cache = stream.CacheMiss
	r := runOf(hit, miss)
	r.SetDispatch(d)
	require.Contains(t, RenderText(r, nil, nil), "the trace predicts 50.0%; the servers' usage reported 40.0% of prompt tokens cached")

	r = runOf(call(t0, "", 100))
	r.SetDispatch(d)
	require.Contains(t, RenderText(r, nil, nil), "the server reported no cached tokens to compare")
}

// TestDroppedCreditsAreFailedCalls: a credit due but never sent is a failed
// call of error type dropped in the run's failure counts (its category's
// when the run had one, no client's when it had several), in the text and
// in the record.
func TestDroppedCreditsAreFailedCalls(t *testing.T) {
	d := &runrecord.Dispatch{Schedules: []runrecord.ScheduleStats{{Name: "constant", Kind: "constant", Claimed: 40, Dropped: 10}}}
	var obs []*Observation
	for i := range 40 {
		obs = append(obs, scheduled(i, 2))
	}
	r := runOf(obs...)
	require.Zero(t, r.Category(runrecord.AllCategories).Failures, "before the account: only the calls")
	r.SetDispatch(d)
	all := r.Category(runrecord.AllCategories)
	require.Equal(t, uint64(50), all.Requests)
	require.Equal(t, uint64(10), all.Failures)
	require.Equal(t, uint64(10), all.Errors["dropped"])
	require.InDelta(t, 0.2, all.FailureRate(), 1e-9)
	only := r.Categories()
	require.Len(t, only, 1)
	require.Equal(t, uint64(10), r.Category(only[0]).Failures, "the run's one category is the credits'")
	text := RenderText(r, Diagnose(r), nil)
	require.Regexp(t, `all +50 +20.0% .*dropped:10`, text)
	require.Contains(t, text, "error type dropped")
	_, _, raw, err := Render(r, nil, RenderOptions{})
	require.NoError(t, err)
	var rec runrecord.Record
	require.NoError(t, json.Unmarshal(raw, &rec))
	require.Equal(t, uint64(10), rec.Categories[runrecord.AllCategories].Failures)
	require.Equal(t, uint64(10), rec.Categories[runrecord.AllCategories].Errors["dropped"])

	// Two categories and two clients: the credit's is unknown, the run's is not.
	a, b := scheduled(1, 2), scheduled(2, 2)
	a.Name, a.Category = "a", "short"
	b.Name, b.Category = "b", "long"
	r = runOf(a, b)
	r.SetDispatch(d)
	require.Equal(t, uint64(10), r.Category(runrecord.AllCategories).Failures)
	require.Equal(t, uint64(12), r.Category(runrecord.AllCategories).Requests)
	require.Zero(t, r.Category("short").Failures)
	require.True(t, r.PerClient())
	require.Zero(t, r.Client("a").Category(runrecord.AllCategories).Failures, "no client took the credits")

	// Late is not dropped.
	r = runOf(obs...)
	r.SetDispatch(&runrecord.Dispatch{Schedules: []runrecord.ScheduleStats{{Name: "constant", Kind: "constant", Claimed: 40, Late: 40}}})
	require.Zero(t, r.Category(runrecord.AllCategories).Failures)
}
