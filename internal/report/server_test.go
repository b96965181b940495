package report

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/compare"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/servermetrics"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// serverView is a server's view of a run, as internal/servermetrics gives it.
func serverView(finished, prompt float64, waiting servermetrics.GaugeStats, hists map[string]servermetrics.HistStats) servermetrics.View {
	return servermetrics.View{
		Endpoint: "http://vllm:8000/metrics", Engine: servermetrics.EngineVLLM, IntervalS: 1, Scrapes: waiting.Samples,
		Run: &servermetrics.Window{
			From: t0, To: t0.Add(3 * time.Minute), Scrapes: waiting.Samples,
			Counters:   map[string]float64{servermetrics.RequestsFinished: finished, servermetrics.PromptTokens: prompt, servermetrics.Preemptions: 0},
			Gauges:     map[string]servermetrics.GaugeStats{servermetrics.RequestsWaiting: waiting},
			Histograms: hists,
		},
	}
}

func runTotals(r *Run) (calls uint64, prompt int64) {
	all := r.Category(runrecord.AllCategories)
	return all.Requests, all.PromptTokens
}

// A server whose counts match the client's, with an empty queue: the section
// is there, the TTFT is split with the server's means, and nothing is found.
func TestServerViewHealthyGivesTheSplitAndNoFinding(t *testing.T) {
	r := synth{seed: 1, stages: []synthStage{{12, 90}}}.collect()
	calls, prompt := runTotals(r)
	clientTTFT := r.Category(runrecord.AllCategories).S(record.DistTTFT).Mean() / 1e3
	v := serverView(float64(calls), float64(prompt), servermetrics.GaugeStats{Samples: 90},
		map[string]servermetrics.HistStats{
			servermetrics.TTFT:    {Count: float64(calls), Mean: ptr(clientTTFT - 0.012)},
			servermetrics.Queue:   {Count: float64(calls), Mean: ptr(0.002)},
			servermetrics.Prefill: {Count: float64(calls), Mean: ptr(clientTTFT - 0.030)},
		})
	text, _, rec, err := Render(r, nil, RenderOptions{Server: []servermetrics.View{v}})
	require.NoError(t, err)
	for _, f := range diagnoseServer(r, []servermetrics.View{v}, nil) {
		t.Errorf("unexpected finding %s: %v", f.ID, f.Evidence)
	}
	assert.Contains(t, text, "The server's own view — http://vllm:8000/metrics (vllm, 90 scrapes")
	assert.Contains(t, text, "outside the server 12.0ms")
	assert.Contains(t, text, "queue 2.00ms")
	var got runrecord.Record
	require.NoError(t, json.Unmarshal(rec, &got))
	require.Len(t, got.Server, 1)
	assert.InDelta(t, float64(calls), got.Server[0].Run.Counters[servermetrics.RequestsFinished], 0)
}

// The server's own queue is queue_bound's evidence, whether or not the
// client's stages showed it; KV pressure and counts that disagree with the
// client's are findings of their own.
func TestServerFindingsCiteTheServer(t *testing.T) {
	r := synth{seed: 2, stages: []synthStage{{12, 90}}}.collect()
	calls, prompt := runTotals(r)
	queued := serverView(float64(calls), float64(prompt),
		servermetrics.GaugeStats{Samples: 90, Mean: 3.2, Max: 9, P95: 7, AboveZero: 0.8},
		map[string]servermetrics.HistStats{
			servermetrics.TTFT:  {Count: float64(calls), Mean: ptr(0.9)},
			servermetrics.Queue: {Count: float64(calls), Mean: ptr(0.6)},
		})
	fs := diagnoseServer(r, []servermetrics.View{queued}, nil)
	require.Equal(t, []string{"queue_bound"}, ids(fs))
	assert.Contains(t, fs[0].Evidence[0], "requests waiting > 0 in 80.0% of 90 scrapes")
	assert.Contains(t, fs[0].Evidence[0], "queue time mean 600ms = 66.7% of its TTFT mean 900ms")
	assert.Contains(t, fs[0].Advice, "docs/guide.md#queue_bound")

	// A client-side queue_bound gets the server's evidence, not a twin.
	client := []runrecord.Finding{{ID: "queue_bound", Evidence: []string{"TTFT grew"}}}
	fs = diagnoseServer(r, []servermetrics.View{queued}, client)
	require.Equal(t, []string{"queue_bound"}, ids(fs))
	assert.Len(t, fs[0].Evidence, 2)

	kv := serverView(float64(calls), float64(prompt), servermetrics.GaugeStats{Samples: 90}, nil)
	kv.Run.Gauges[servermetrics.KVCacheUsage] = servermetrics.GaugeStats{Samples: 90, P95: 0.97, Max: 1}
	kv.Run.Counters[servermetrics.Preemptions] = 14
	fs = diagnoseServer(r, []servermetrics.View{kv}, nil)
	require.Equal(t, []string{"kv_pressure"}, ids(fs))
	assert.Contains(t, fs[0].Evidence[0], "KV-cache usage p95 97.0% (max 100.0%), 14 preemptions")

	foreign := serverView(float64(calls)*1.5, float64(prompt), servermetrics.GaugeStats{Samples: 90}, nil)
	fs = diagnoseServer(r, []servermetrics.View{foreign}, nil)
	require.Equal(t, []string{"server_count_mismatch"}, ids(fs))
	assert.Contains(t, fs[0].Evidence[0], "the server finished")
}

// Shared-prefix prompts the server's cache never found: cache_busted from the
// server's own counters when the client's usage could not tell, one more line
// of evidence when it could.
func TestServerCacheBusted(t *testing.T) {
	sy := synth{seed: 1, stages: []synthStage{{12, 90}}, sharedPrefix: true}
	c := NewCollector(Options{Start: t0})
	for _, o := range sy.observations() {
		o.Cache, o.Usage.CachedTokens = stream.CacheUnknown, 0 // a server whose usage says nothing of its cache
		c.Add(o)
	}
	unknown := c.Snapshot()
	calls, prompt := runTotals(unknown)
	v := serverView(float64(calls), float64(prompt), servermetrics.GaugeStats{Samples: 90}, nil)
	v.Run.PrefixHitRatio = ptr(0.0)
	fs := diagnoseServer(unknown, []servermetrics.View{v}, nil)
	require.Equal(t, []string{"cache_busted"}, ids(fs))
	assert.Contains(t, fs[0].Evidence[0], "0.0% of the prompt tokens it looked up")
	v.Run.PrefixHitRatio = ptr(0.02)
	assert.Empty(t, diagnoseServer(unknown, []servermetrics.View{v}, nil), "a low ratio alone is not evidence")

	known := sy.collect() // every call's cache state known (all misses)
	v.Run.PrefixHitRatio = ptr(0.0)
	assert.Empty(t, diagnoseServer(known, []servermetrics.View{v}, nil), "the client's own rule speaks for known states")
	fs = diagnoseServer(known, []servermetrics.View{v}, []runrecord.Finding{{ID: "cache_busted", Evidence: []string{"client"}}})
	require.Equal(t, []string{"cache_busted"}, ids(fs))
	assert.Len(t, fs[0].Evidence, 2)
}

// A queue shorter than any user would notice is not a queue, whatever its
// share of a short TTFT (an engine admits requests at its step boundaries).
func TestServerQueueOfAFractionOfAStepIsNoFinding(t *testing.T) {
	r := synth{seed: 3, stages: []synthStage{{12, 90}}}.collect()
	calls, prompt := runTotals(r)
	v := serverView(float64(calls), float64(prompt), servermetrics.GaugeStats{Samples: 90},
		map[string]servermetrics.HistStats{
			servermetrics.TTFT:  {Count: float64(calls), Mean: ptr(0.031)},
			servermetrics.Queue: {Count: float64(calls), Mean: ptr(0.013)},
		})
	assert.Empty(t, diagnoseServer(r, []servermetrics.View{v}, nil))
}

// With a baseline that read the same server, its figures are compared.
func TestServerViewAgainstTheBaseline(t *testing.T) {
	r := synth{seed: 1, stages: []synthStage{{4, 30}}}.collect()
	now := serverView(100, 1000, servermetrics.GaugeStats{Samples: 30, P95: 3}, map[string]servermetrics.HistStats{servermetrics.Queue: {Count: 100, Mean: ptr(0.4)}})
	was := serverView(100, 1000, servermetrics.GaugeStats{Samples: 30, P95: 0}, map[string]servermetrics.HistStats{servermetrics.Queue: {Count: 100, Mean: ptr(0.1)}})
	text, _, _, err := Render(r, nil, RenderOptions{Server: []servermetrics.View{now}, BaselineServer: []servermetrics.View{was}})
	require.NoError(t, err)
	assert.Contains(t, text, "against the baseline: queue mean 100ms → 400ms (worse); requests_waiting p95 0.00 → 3.00 (worse); "+
		"preemptions per request 0.00 → 0.00; finished per s 0.56/s → 0.56/s")
}

// A run record compared with a baseline record turns a server-side change
// into a finding and into comparison rows, whatever the client's figures
// did; the same server figures, or a change under the floors, find nothing.
func TestServerChangeAgainstABaselineRecordIsAFinding(t *testing.T) {
	r := synth{seed: 1, stages: []synthStage{{4, 30}}}.collect()
	calls, prompt := runTotals(r)
	hists := func(queue, prefill float64) map[string]servermetrics.HistStats {
		return map[string]servermetrics.HistStats{
			servermetrics.Queue: {Count: float64(calls), Mean: ptr(queue)}, servermetrics.Prefill: {Count: float64(calls), Mean: ptr(prefill)},
		}
	}
	waiting := servermetrics.GaugeStats{Samples: 30, P95: 0}
	baseView := serverView(float64(calls), float64(prompt), waiting, hists(0.1, 0.05))
	_, _, raw, err := Render(r, nil, RenderOptions{Server: []servermetrics.View{baseView}})
	require.NoError(t, err)
	base, err := runrecord.ParseRecord("base.json", raw)
	require.NoError(t, err)
	require.Len(t, base.Server, 1, "the record keeps the server's view")

	for _, c := range []struct {
		name             string
		queue, prefill   float64
		finding, changed bool
	}{
		{"same", 0.1, 0.05, false, false},
		{"under the floors", 0.105, 0.055, false, false},             // +5 ms: under 10 ms
		{"queue grew", 0.4, 0.05, true, true},                        // +300 %
		{"prefill improved", 0.1, 0.02, false, true},                 // better is no finding
		{"small mean, large share", 0.1, 0.004 + 0.05, false, false}, // +8 %
	} {
		now := serverView(float64(calls), float64(prompt), waiting, hists(c.queue, c.prefill))
		text, _, raw, err := Render(r, nil, RenderOptions{Server: []servermetrics.View{now}, Baseline: base})
		require.NoError(t, err, c.name)
		rec, err := runrecord.ParseRecord("run.json", raw)
		require.NoError(t, err, c.name)
		var regressed *runrecord.Finding
		for i := range rec.Findings {
			if rec.Findings[i].ID == "server_regressed" {
				regressed = &rec.Findings[i]
			}
		}
		assert.Equal(t, c.finding, regressed != nil, "%s: %v", c.name, ids(rec.Findings))
		require.NotNil(t, rec.Comparison, c.name)
		assert.NotEmpty(t, rec.Comparison.Server, "%s: the record's comparison has the server's rows", c.name)
		assert.Equal(t, c.changed, len(changedServer(rec.Comparison.Server)) > 0, "%s: %+v", c.name, rec.Comparison.Server)
		if c.finding {
			assert.Contains(t, regressed.Evidence[0], "queue mean 100ms → 400ms")
			assert.Contains(t, text, "baseline, the server's own figures: 1 of ")
			assert.Contains(t, text, "worse   http://vllm:8000/metrics: queue mean 100ms → 400ms")
		}
	}

	// llmstream merge --baseline compares records: the same rows, from the files alone.
	cur := *base
	cur.Server = []servermetrics.View{serverView(float64(calls), float64(prompt), waiting, hists(0.4, 0.05))}
	cmp := compare.Records(&cur, base)
	require.NotNil(t, cmp)
	assert.Len(t, changedServer(cmp.Server), 1)
	assert.Contains(t, RenderRecordText(&runrecord.Record{Categories: base.Categories, Comparison: cmp}), "queue mean 100ms → 400ms")
}

// An endpoint that was never read: the report says why, finds nothing, and
// quotes no figure.
func TestServerViewMissingSaysWhy(t *testing.T) {
	r := synth{seed: 1, stages: []synthStage{{4, 30}}}.collect()
	v := servermetrics.View{Endpoint: "http://vllm:8000/metrics", Missing: "no scrape succeeded: serverMetrics http://vllm:8000/metrics answered HTTP 401"}
	text, html, _, err := Render(r, nil, RenderOptions{Server: []servermetrics.View{v}})
	require.NoError(t, err)
	assert.Contains(t, text, "unknown: no scrape succeeded")
	assert.NotContains(t, text, "TTFT split")
	assert.Contains(t, string(html), "answered HTTP 401")
	assert.Empty(t, diagnoseServer(r, []servermetrics.View{v}, nil))
}

// Several instances scraped one server: the merged record keeps it once.
func TestMergeKeepsEachServerOnce(t *testing.T) {
	_, parts, _ := splitRun(2)
	record := func(name, segment string, r *Run) *runrecord.Record {
		b, err := marshalRecord(r, nil, nil, RenderOptions{Info: testInfo(segment),
			Server: []servermetrics.View{serverView(100, 1000, servermetrics.GaugeStats{Samples: 30}, nil)}})
		require.NoError(t, err)
		rec, err := runrecord.ParseRecord(name, b)
		require.NoError(t, err)
		return rec
	}
	a, b := record("a.json", "0:1/2", parts[0]), record("b.json", "1/2:1", parts[1])
	b.Server[0].Run.From = b.Server[0].Run.From.Add(-time.Second) // b began first: its window covers a's
	b.Server[0].Run.Counters[servermetrics.RequestsFinished] = 101
	m, err := Merge(a, b)
	require.NoError(t, err)
	require.Len(t, m.Server, 1)
	assert.InDelta(t, 101, m.Server[0].Run.Counters[servermetrics.RequestsFinished], 0, "the widest window, never the sum")

	// The merged reports show the server's view as a single run's do, its
	// client column empty: a merged record keeps no client figures per window.
	text := RenderRecordText(m)
	assert.Contains(t, text, "The server's own view — http://vllm:8000/metrics (vllm, 30 scrapes")
	require.Regexp(t, `\n  run +101 +1000 .* –\n`, text, "the run's row, finished 101, no client TTFT")
	assert.Contains(t, text, "a merged record keeps no client figures per window")
	assert.NotContains(t, text, "TTFT split (", "no split without the client's figures")
	page := string(RenderRecordHTML(m, "t"))
	assert.Contains(t, page, `<table class="server">`)
	assert.Contains(t, page, "<td>run</td><td>101</td><td>1000</td>")
}

func TestFmtEstimateNamesItsBucket(t *testing.T) {
	hi := 0.04
	assert.Equal(t, "≈ 28.0ms (bucket 20.0ms–40.0ms)", fmtEstimate(servermetrics.Estimate{Value: 0.028, Lo: 0.02, Hi: &hi}))
	first := 0.3
	assert.True(t, strings.HasPrefix(fmtEstimate(servermetrics.Estimate{Value: 0.15, Lo: 0, Hi: &first}), "≤ 300ms"))
	assert.Equal(t, "> 2560.0s (last bucket)", fmtEstimate(servermetrics.Estimate{Value: 2560, Lo: 2560}))
}

// Two clients, each on its own server, with a warm-up left out of the
// report: each server counted its own client's calls, warm-up included, and
// no more, so nothing is out of count; a server that also counted another
// tenant's requests is.
func TestTwoClientsOnTwoServersWithAWarmup(t *testing.T) {
	testStart := t0
	c := NewCollector(Options{Exclude: Exclude{Warmup: 5 * time.Second}})
	calls := map[string]float64{}
	for i := range 200 {
		name := []string{"a", "b"}[i%2]
		o := call(testStart.Add(time.Duration(i)*100*time.Millisecond), "", 100)
		o.Name, o.TestStart = name, testStart
		c.Add(o)
		calls[name]++
	}
	run := c.Snapshot()
	require.True(t, run.PerClient())
	require.EqualValues(t, 50, run.Excluded.Calls, "5 s of warm-up at 10 calls/s")
	assert.EqualValues(t, 25, run.Client("a").Excluded.Calls, "a's own left-out calls")
	view := func(client string, finished float64) servermetrics.View {
		v := serverView(finished, 0, servermetrics.GaugeStats{Samples: 20}, nil)
		v.Endpoint, v.Client = "http://"+client+":8000/metrics", client
		return v
	}
	fs := diagnoseServer(run, []servermetrics.View{view("a", calls["a"]), view("b", calls["b"])}, nil)
	assert.Empty(t, ids(fs), "each server counted its own client's calls")

	fs = diagnoseServer(run, []servermetrics.View{view("a", calls["a"]), view("b", calls["b"]+20)}, nil)
	require.Equal(t, []string{"server_count_mismatch"}, ids(fs))
	assert.Equal(t, "b", fs[0].Client)
	assert.Contains(t, fs[0].Evidence[0], "the server finished 120 requests, 20 more than the 100 the client sent it (100 answered (2xx); 25 of the calls left out of the report)")
}

// With a warm-up left out, the server's run window still counts the
// warm-up's calls (the counts compare with every call sent), but the TTFT
// split and the client's TTFT column sit beside the window after it: the
// client's figures leave the warm-up out.
func TestWarmupSplitsTheTTFTAfterIt(t *testing.T) {
	r := synth{seed: 1, stages: []synthStage{{12, 90}}}.collect()
	calls, prompt := runTotals(r)
	clientTTFT := r.Category(runrecord.AllCategories).S(record.DistTTFT).Mean() / 1e3
	ttft := func(mean float64) map[string]servermetrics.HistStats {
		return map[string]servermetrics.HistStats{servermetrics.TTFT: {Count: float64(calls), Mean: ptr(mean)}}
	}
	v := serverView(float64(calls), float64(prompt), servermetrics.GaugeStats{Samples: 90}, ttft(clientTTFT/2)) // a cold start's slow calls in it
	after := *serverView(float64(calls), float64(prompt), servermetrics.GaugeStats{Samples: 80}, ttft(clientTTFT-0.012)).Run
	after.Name = "after warm-up"
	v.Measured = &after
	text, _, _, err := Render(r, nil, RenderOptions{Server: []servermetrics.View{v}})
	require.NoError(t, err)
	assert.Contains(t, text, "TTFT split (after warm-up): client TTFT mean")
	assert.Contains(t, text, "outside the server 12.0ms")
	assert.Regexp(t, `\n  run +\d+ .* –\n  after warm-up `, text, "the client's TTFT beside the window after the warm-up only")
}

// Two k6 instances, each one execution segment, scrape one server: each
// sees the other's calls in the server's count, so neither raises
// server_count_mismatch on its own; the merged record holds the server's
// count against the whole test's calls, and raises it only when they differ.
func TestSegmentsLeaveTheCountToTheMerge(t *testing.T) {
	var recs []*runrecord.Record
	var total uint64
	for i, seg := range []string{"0:1/2", "1/2:1"} {
		r := synth{seed: uint64(i + 1), stages: []synthStage{{4, 30}}}.collect()
		calls, _ := runTotals(r)
		total += calls
		info := &runrecord.RunInfo{Segment: seg, SegmentSequence: "0,1/2,1"}
		require.True(t, PartialSegment(info))
		v := serverView(0, 0, servermetrics.GaugeStats{Samples: 30}, nil)
		recs = append(recs, &runrecord.Record{Server: []servermetrics.View{v}, Run: info})
		_, _, raw, err := Render(r, nil, RenderOptions{Server: []servermetrics.View{v}, Info: info})
		require.NoError(t, err)
		rec, err := runrecord.ParseRecord(seg, raw)
		require.NoError(t, err)
		assert.NotContains(t, ids(rec.Findings), "server_count_mismatch", seg)
		recs[i] = rec
	}
	assert.False(t, PartialSegment(&runrecord.RunInfo{Segment: "0:1"}))
	assert.False(t, PartialSegment(nil))
	for _, c := range []struct {
		finished float64
		finding  bool
	}{{float64(total), false}, {float64(total) + 10, true}} {
		for _, rec := range recs {
			rec.Server[0].Run.Counters[servermetrics.RequestsFinished] = c.finished
		}
		merged, err := Merge(recs...)
		require.NoError(t, err)
		assert.Equal(t, c.finding, slices.Contains(ids(merged.Findings), "server_count_mismatch"), "server finished %.0f of %d calls", c.finished, total)
		if c.finding {
			assert.Contains(t, RenderRecordText(merged), "[server_count_mismatch]")
			assert.Contains(t, string(RenderRecordHTML(merged, "t")), "server_count_mismatch")
		}
	}
}

// The server's set-up heads its section: the cache configuration and the
// served models with their context length, a length the server did not
// give as unknown (null in the record), never 0.
func TestServerSetUpInTheReports(t *testing.T) {
	r := synth{seed: 1, stages: []synthStage{{4, 20}}}.collect()
	calls, prompt := runTotals(r)
	v := serverView(float64(calls), float64(prompt), servermetrics.GaugeStats{Samples: 20}, nil)
	n := int64(4096)
	v.Config = map[string]string{"block_size": "16", "enable_prefix_caching": "True"}
	v.Models = []servermetrics.ServedModel{{ID: "llama", MaxModelLen: &n}, {ID: "sql-lora"}}
	text, html, rec, err := Render(r, nil, RenderOptions{Server: []servermetrics.View{v}})
	require.NoError(t, err)
	const models = "served models: llama (context 4096 tokens), sql-lora (context unknown)"
	assert.Contains(t, text, "server configuration: block_size 16, enable_prefix_caching True")
	assert.Contains(t, text, models)
	assert.Contains(t, string(html), models)
	var got struct {
		Server []struct {
			Models []map[string]any `json:"models"`
		} `json:"server"`
	}
	require.NoError(t, json.Unmarshal(rec, &got))
	require.Len(t, got.Server, 1)
	require.Len(t, got.Server[0].Models, 2)
	assert.InDelta(t, 4096, got.Server[0].Models[0]["max_model_len"], 0)
	unknown, present := got.Server[0].Models[1]["max_model_len"]
	assert.True(t, present, "the field is there")
	assert.Nil(t, unknown, "unknown is null")
}
