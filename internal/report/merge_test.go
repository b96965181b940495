package report

import (
	"encoding/json"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/llmstream/xk6-llmstream/internal/report/compare"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
)

func testInfo(segment string) *runrecord.RunInfo {
	return &runrecord.RunInfo{
		K6Version: "v1.8.1", ModuleVersion: "v0.9.0",
		Load:     map[string]any{"default": map[string]any{"executor": "shared-iterations", "vus": 8, "iterations": 400}},
		Datasets: []runrecord.DatasetInfo{{Source: "synthetic", Options: map[string]any{"seed": 7}, Items: 500}},
		Clients:  []runrecord.ClientInfo{{Name: "chat", Protocol: "openai", Model: "m1", Host: "http://127.0.0.1:8080"}},
		Segment:  segment,
	}
}

// recordThrough writes and reads a record the way report() and the merge
// command do, so the test also covers the JSON round trip.
func recordThrough(t *testing.T, name string, r *Run, info *runrecord.RunInfo) *runrecord.Record {
	t.Helper()
	b, err := marshalRecord(r, Diagnose(r), nil, RenderOptions{Info: info, Meta: map[string]any{"k6Version": "v1.8.1"}})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := runrecord.ParseRecord(name, b)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// splitRun collects one synthetic run whole and split over n "instances"
// (calls dealt round-robin, as k6 stripes iterations over segments).
func splitRun(n int) (whole *Run, parts []*Run, ttfts []float64) {
	obs := synth{seed: 11, stages: []synthStage{{16, 60}}, stallProb: 0.05, hitRate: 0.3, sharedPrefix: true}.observations()
	all := NewCollector(Options{Start: t0})
	cs := make([]*Collector, n)
	for i := range cs {
		cs[i] = NewCollector(Options{Start: t0})
	}
	for i, o := range obs {
		o.Name = []string{"small", "large"}[i/7%2] // two clients, as in an A/B test
		all.Add(o)
		cs[i%n].Add(o)
		if ttft, ok := o.TTFT.MS(); o.OK && ok && ttft > 0 {
			ttfts = append(ttfts, ttft)
		}
	}
	for _, c := range cs {
		parts = append(parts, c.Snapshot())
	}
	return all.Snapshot(), parts, ttfts
}

func TestMergeOfSegmentsEqualsTheWholeRun(t *testing.T) {
	t.Parallel()
	whole, parts, ttfts := splitRun(3)
	segs := []string{"0:1/3", "1/3:2/3", "2/3:1"}
	recs := make([]*runrecord.Record, len(parts))
	for i, p := range parts {
		recs[i] = recordThrough(t, segs[i]+".json", p, testInfo(segs[i]))
	}
	single := recordThrough(t, "single.json", whole, testInfo(""))
	// Order of the arguments does not matter.
	merged, err := Merge(recs[2], recs[0], recs[1])
	if err != nil {
		t.Fatal(err)
	}
	for cat, want := range single.Categories {
		got := merged.Categories[cat]
		if got == nil {
			t.Fatalf("category %s missing after merge", cat)
		}
		if got.Requests != want.Requests || got.Failures != want.Failures || got.Stalls != want.Stalls ||
			got.OutputTokens != want.OutputTokens || got.CacheHits != want.CacheHits || got.CacheMisses != want.CacheMisses {
			t.Errorf("%s: merged counts %d/%d/%d/%d/%d/%d, single run %d/%d/%d/%d/%d/%d", cat,
				got.Requests, got.Failures, got.Stalls, got.OutputTokens, got.CacheHits, got.CacheMisses,
				want.Requests, want.Failures, want.Stalls, want.OutputTokens, want.CacheHits, want.CacheMisses)
		}
		for name, wm := range want.Metrics {
			gm := got.Metrics[name]
			if gm == nil || gm.Count != wm.Count {
				t.Errorf("%s/%s: merged %v values, single %d", cat, name, gm, wm.Count)
				continue
			}
			// Same values in the same buckets: the merged sketch is the single sketch.
			if gm.P50 != wm.P50 || gm.P95 != wm.P95 || gm.P99 != wm.P99 || gm.Min != wm.Min || gm.Max != wm.Max ||
				math.Abs(gm.Mean-wm.Mean) > 1e-9*math.Abs(wm.Mean) {
				t.Errorf("%s/%s: merged %+v, single %+v", cat, name, *gm, *wm)
			}
		}
	}
	if len(single.Clients) != 2 || len(merged.Clients) != 2 {
		t.Fatalf("clients: single %d, merged %d", len(single.Clients), len(merged.Clients))
	}
	for name, want := range single.Clients {
		for cat, wc := range want.Categories {
			gc := merged.Clients[name].Categories[cat]
			if gc == nil || gc.Requests != wc.Requests || gc.Metrics["ttft"].P95 != wc.Metrics["ttft"].P95 {
				t.Errorf("client %s %s: merged %+v, single %+v", name, cat, gc, wc)
			}
		}
	}
	if merged.Categories[runrecord.AllCategories].Requests < 500 {
		t.Fatalf("too few calls to mean anything: %d", merged.Categories[runrecord.AllCategories].Requests)
	}
	// And against the exact order statistics of every call.
	sort.Float64s(ttfts)
	mt := merged.Categories[runrecord.AllCategories].Metrics["ttft"]
	for _, c := range []struct{ q, got float64 }{{0.5, mt.P50}, {0.95, mt.P95}, {0.99, mt.P99}} {
		want := exactQuantile(ttfts, c.q)
		if rel := math.Abs(c.got-want) / want; rel > sketch.FineAlpha {
			t.Errorf("merged TTFT q%g %g, exact %g (rel err %.4f)", c.q, c.got, want, rel)
		}
	}
	if merged.Run == nil || merged.Run.Segment != "" || len(merged.Instances) != 3 {
		t.Fatalf("merged record should cover the whole test from 3 instances: %+v %+v", merged.Run, merged.Instances)
	}
	// The merged random sample is as large as an instance's and mixes all of them.
	n := len(merged.Categories["short"].Samples["ttft"])
	if n == 0 || n < len(recs[0].Categories["short"].Samples["ttft"]) {
		t.Errorf("merged sample of %d values", n)
	}
	if merged.Categories["short"].SamplesSeen != single.Categories["short"].SamplesSeen {
		t.Errorf("samples seen %d, single run %d", merged.Categories["short"].SamplesSeen, single.Categories["short"].SamplesSeen)
	}
	// The merged record is a record like any other: it loads and serves as a baseline.
	b, err := json.Marshal(merged)
	if err != nil {
		t.Fatal(err)
	}
	back, err := runrecord.ParseRecord("merged.json", b)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range compare.Records(NewRecord(whole, nil, nil, nil), back).Rows {
		if !unchanged(row) {
			t.Errorf("the whole run judged %q against the merge of its parts: %+v", row.Verdict, row)
		}
	}
	// Compared as a record with the single run's record: nothing changed, and
	// the same rows and figures as comparing the live run with the merge.
	cr := compare.Records(merged, single)
	if len(cr.Rows) == 0 || len(cr.Differences) != 0 {
		t.Fatalf("record comparison: %d rows, differences %q", len(cr.Rows), cr.Differences)
	}
	for _, row := range cr.Rows {
		if !unchanged(row) {
			t.Errorf("the merge judged %q against the single run: %+v", row.Verdict, row)
		}
	}
	slower := recordThrough(t, "slower.json", synth{seed: 12, stages: []synthStage{{16, 60}},
		queueMS: func(int) float64 { return 300 }}.collect(), testInfo(""))
	for _, row := range compare.Records(merged, slower).Rows {
		if row.Metric == "ttft" && row.Stat == "p50" && row.Verdict != runrecord.VerdictBetter {
			t.Errorf("%s: TTFT 300 ms faster than the baseline judged %q", row.Category, row.Verdict)
		}
	}
	merged.Comparison = compare.Records(merged, slower)
	text := RenderRecordText(merged)
	for _, want := range []string{"merged from 3 instances", "0:1/3", "2/3:1", "ttft", "no stages", "figures changed significantly"} {
		if !strings.Contains(text, want) {
			t.Errorf("merged text lacks %q:\n%s", want, text)
		}
	}
	if doc := string(RenderRecordHTML(merged, "")); !strings.Contains(doc, `id="instances"`) || !strings.Contains(doc, "1/3:2/3") ||
		!strings.Contains(doc, `<table id="comparison"`) {
		t.Error("merged HTML lacks the instances table")
	}
}

func TestMergeRefusesWhatIsNotOneWholeTest(t *testing.T) {
	t.Parallel()
	_, parts, _ := splitRun(2)
	rec := func(name, seg string, edit func(*runrecord.RunInfo)) *runrecord.Record {
		info := testInfo(seg)
		if edit != nil {
			edit(info)
		}
		return recordThrough(t, name, parts[0], info)
	}
	a := rec("a.json", "0:1/2", nil)
	b := rec("b.json", "1/2:1", nil)
	if _, err := Merge(a, b); err != nil {
		t.Fatalf("a valid pair was refused: %v", err)
	}
	noInfo := recordThrough(t, "old.json", parts[1], nil)
	for name, c := range map[string]struct {
		recs []*runrecord.Record
		want []string
	}{
		"overlap":       {[]*runrecord.Record{a, rec("c.json", "0:1/2", nil)}, []string{"c.json", "a.json", "overlaps", "0:1/2"}},
		"missing":       {[]*runrecord.Record{rec("x.json", "0:1/3", nil), rec("y.json", "2/3:1", nil)}, []string{"1/3:2/3", "missing"}},
		"missing tail":  {[]*runrecord.Record{a}, []string{"1/2:1"}},
		"whole twice":   {[]*runrecord.Record{rec("w1.json", "", nil), rec("w2.json", "", nil)}, []string{"overlaps"}},
		"half + whole":  {[]*runrecord.Record{rec("h.json", "0:1/2", func(i *runrecord.RunInfo) { i.SegmentSequence = "0,1/2,1" }), rec("w.json", "", nil)}, []string{"w.json (segment 0:1 (whole test)) overlaps h.json"}},
		"other load":    {[]*runrecord.Record{a, rec("v.json", "1/2:1", func(i *runrecord.RunInfo) { i.Load["default"].(map[string]any)["vus"] = 20 })}, []string{"v.json", "not records of the same test", "load.default.vus 8 vs 20"}},
		"other model":   {[]*runrecord.Record{a, rec("m.json", "1/2:1", func(i *runrecord.RunInfo) { i.Clients[0].Model = "m2" })}, []string{"clients.chat.model m1 vs m2"}},
		"other dataset": {[]*runrecord.Record{a, rec("d.json", "1/2:1", func(i *runrecord.RunInfo) { i.Datasets[0].Options["seed"] = 8 })}, []string{"datasets.1.options.seed 7 vs 8"}},
		"sequence":      {[]*runrecord.Record{a, rec("s.json", "1/2:1", func(i *runrecord.RunInfo) { i.SegmentSequence = "0,1/2,1" })}, []string{"sequences"}},
		"bad segment":   {[]*runrecord.Record{a, rec("bad.json", "1/2-1", nil)}, []string{"bad.json", "1/2-1"}},
		"no run info":   {[]*runrecord.Record{a, noInfo}, []string{"old.json", "no run information"}},
		"none":          {nil, []string{"no run records"}},
	} {
		_, err := Merge(c.recs...)
		if err == nil {
			t.Errorf("%s: merged", name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", name, err, w)
			}
		}
	}
	// Versions may differ between instances (say so, but merge).
	if _, err := Merge(a, rec("v2.json", "1/2:1", func(i *runrecord.RunInfo) { i.ModuleVersion = "v0.9.1" })); err != nil {
		t.Errorf("another module version must not block a merge: %v", err)
	}
}

func TestSegmentsParseLikeK6Writes(t *testing.T) {
	for _, ok := range []string{"0:1/2", "1/2:1", "0:0.25", "25%:50%", "0:1"} {
		if _, err := parseSegment(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"1/2", "1:0", "0:2", "a:b", "-1/2:1/2", "1/2:1/2"} {
		if _, err := parseSegment(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	segs := []segment{}
	for _, s := range []string{"50%:1", "0:0.5"} {
		sg, _ := parseSegment(s)
		segs = append(segs, sg)
	}
	if err := checkCoverage([]string{"a", "b"}, segs); err != nil {
		t.Errorf("50%%:1 and 0:0.5 cover the test: %v", err)
	}
}

func exactQuantile(sorted []float64, q float64) float64 {
	return sorted[int(q*float64(len(sorted)-1))]
}
