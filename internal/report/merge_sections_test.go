package report

import (
	"math"
	"strings"
	"testing"

	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
)

// sketchOfValues is a fine sketch of vs (ms).
func sketchOfValues(vs ...float64) *sketch.Sketch {
	s := sketch.New(sketch.FineAlpha)
	for _, v := range vs {
		s.Add(v)
	}
	return s
}

// evenValues is n values from lo, step apart.
func evenValues(n int, lo, step float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = lo + step*float64(i)
	}
	return out
}

// sectionRecord is a record of one segment whose chat calls' TTFTs are ttfts.
func sectionRecord(segment string, ttfts []float64) *runrecord.Record {
	all := &runrecord.CategoryRecord{Requests: uint64(len(ttfts)), Metrics: map[string]*runrecord.MetricRecord{
		record.DistTTFT.String(): metricRecord(sketchOfValues(ttfts...))}}
	return &runrecord.Record{Format: runrecord.RecordFormat, Categories: map[string]*runrecord.CategoryRecord{runrecord.AllCategories: all}, Run: testInfo(segment)}
}

func f64(v float64) *float64 { return &v }

// wantQuantiles fails unless got has the count and the P50/P95/P99 of a
// sketch of every value in want (the union's own sketch, not an average).
func wantQuantiles(t *testing.T, what string, got *runrecord.MetricRecord, want []float64) {
	t.Helper()
	s := sketchOfValues(want...)
	if got == nil || got.Count != s.Count() {
		t.Fatalf("%s: merged %+v, want %d values", what, got, s.Count())
	}
	for _, q := range []struct {
		got, p float64
	}{{got.P50, 0.5}, {got.P95, 0.95}, {got.P99, 0.99}} {
		if w := s.Quantile(q.p); math.Abs(q.got-w) > 1e-9 {
			t.Errorf("%s: merged p%.0f %v, the union's %v", what, 100*q.p, q.got, w)
		}
	}
}

func TestMergeCarriesDispatchAndRetrieval(t *testing.T) {
	a, b := sectionRecord("0:1/2", evenValues(10, 100, 5)), sectionRecord("1/2:1", evenValues(10, 300, 5))
	a.Dispatch = &runrecord.Dispatch{
		Schedules:   []runrecord.ScheduleStats{{Name: "main", Kind: "constant", Claimed: 10, Late: 2, Dropped: 1, MaxLagMS: 30}},
		K6Dropped:   f64(3),
		K6Shortfall: &runrecord.VUShortfall{VUsMax: 4, OfferedRate: 2, IterationSec: 1.5, NeededVUs: 3},
	}
	b.Dispatch = &runrecord.Dispatch{Schedules: []runrecord.ScheduleStats{{Name: "main", Kind: "constant", Claimed: 20, Late: 3, MaxLagMS: 50}},
		K6Dropped: f64(1), K6Shortfall: &runrecord.VUShortfall{VUsMax: 4, OfferedRate: 6, IterationSec: 0.5, NeededVUs: 3}}
	durA1, durA2, durB1, durB2 := evenValues(8, 10, 1), evenValues(6, 40, 2), evenValues(7, 12, 3), evenValues(9, 80, 1)
	embed := func(load float64, calls, failed uint64, dur []float64, batch float64) runrecord.RetrievalRecord {
		return runrecord.RetrievalRecord{Op: "embed", Category: "default", Load: load, Calls: calls, Failed: failed,
			Errors: map[string]uint64{"http_5xx": failed}, BatchMean: f64(batch), InputTokens: 100, RequestBytes: 1000,
			InputTokensPerSec: f64(50), Metrics: map[string]*runrecord.MetricRecord{"duration": metricRecord(sketchOfValues(dur...))}}
	}
	// Each instance ran its share of two stages: 2+3 VUs, then 4+5.
	a.Retrieval = []runrecord.RetrievalRecord{embed(4, 7, 1, durA2, 2), embed(2, 9, 1, durA1, 1)}
	b.Retrieval = []runrecord.RetrievalRecord{embed(3, 8, 1, durB1, 3), embed(5, 10, 1, durB2, 4),
		{Op: "rerank", Category: "default", Load: 5, Calls: 1, Metrics: map[string]*runrecord.MetricRecord{}}}

	m, err := Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	d := m.Dispatch
	if d == nil || len(d.Schedules) != 1 {
		t.Fatalf("merged dispatch %+v", d)
	}
	if s := d.Schedules[0]; s.Claimed != 30 || s.Late != 5 || s.Dropped != 1 || s.MaxLagMS != 50 {
		t.Errorf("merged schedule %+v, want 30 claimed, 5 late, 1 dropped, worst 50 ms", s)
	}
	if d.K6Dropped == nil || *d.K6Dropped != 4 {
		t.Errorf("merged k6 dropped %v, want 4", d.K6Dropped)
	}
	// Little's law over the union: 2×1.5 + 6×0.5 = 6 VU-seconds per second at 8/s.
	if f := d.K6Shortfall; f == nil || f.VUsMax != 8 || f.OfferedRate != 8 || f.IterationSec != 0.75 || f.NeededVUs != 6 {
		t.Errorf("merged shortfall %+v", f)
	}
	if len(m.Retrieval) != 3 {
		t.Fatalf("merged retrieval has %d groups, want embed ×2 and rerank: %+v", len(m.Retrieval), m.Retrieval)
	}
	low, high := m.Retrieval[0], m.Retrieval[1]
	if low.Load != 5 || high.Load != 9 || low.Calls != 17 || high.Calls != 17 || low.Failed != 2 || low.Errors["http_5xx"] != 2 {
		t.Errorf("merged stages %+v / %+v: want loads 5 and 9, 17 calls each, 2 failed", low, high)
	}
	if low.InputTokens != 200 || low.RequestBytes != 2000 || *low.InputTokensPerSec != 100 {
		t.Errorf("merged low stage's tokens %d, bytes %d, tok/s %v", low.InputTokens, low.RequestBytes, *low.InputTokensPerSec)
	}
	if want := (1.0*8 + 3*7) / 15; math.Abs(*low.BatchMean-want) > 1e-9 {
		t.Errorf("merged batch mean %v, want %v (weighted by answered calls)", *low.BatchMean, want)
	}
	wantQuantiles(t, "low stage duration", low.Metrics["duration"], append(append([]float64{}, durA1...), durB1...))
	wantQuantiles(t, "high stage duration", high.Metrics["duration"], append(append([]float64{}, durA2...), durB2...))
	if r := m.Retrieval[2]; r.Op != "rerank" || r.Calls != 1 {
		t.Errorf("a group only one instance had: %+v", r)
	}

	text := RenderRecordText(m)
	for _, want := range []string{"schedule main (constant): 30 credits sent, 5 late (worst 50.0ms), 1 dropped",
		"percentiles omit 1 schedule credits and 4 k6 dropped_iterations", "Embeddings and rerank", "5 VUs", "9 VUs"} {
		if !strings.Contains(text, want) {
			t.Errorf("merged text lacks %q:\n%s", want, text)
		}
	}
	page := string(RenderRecordHTML(m, ""))
	for _, want := range []string{"<h2>Dispatch</h2>", `<table id="retrieval">`} {
		if !strings.Contains(page, want) {
			t.Errorf("merged HTML lacks %q", want)
		}
	}
}

func TestMergeCarriesImagesAndConversations(t *testing.T) {
	ttftA, ttftB := evenValues(12, 100, 7), evenValues(15, 120, 3)
	a, b := sectionRecord("0:1/2", ttftA), sectionRecord("1/2:1", ttftB)
	noneA, oneA := ttftA[:8], ttftA[8:]
	a.Images = []runrecord.ImageRecord{{Images: 0, Calls: 8, TTFT: metricRecord(sketchOfValues(noneA...))},
		{Images: 1, Size: "≤1 MP", Calls: 4, Bytes: 4096, TTFT: metricRecord(sketchOfValues(oneA...))}}
	// b's prompts had no images: it has no section, and its calls are all prompts without images.
	turn1A, turn1B, turn2B := evenValues(5, 90, 4), evenValues(6, 95, 2), evenValues(4, 200, 9)
	jobA, jobB := evenValues(3, 1000, 100), evenValues(5, 2000, 50)
	a.Conversations = &runrecord.ConversationRecord{
		Turns: []runrecord.TurnRecord{{Turn: 1, Cache: "miss", Calls: 5, TTFT: metricRecord(sketchOfValues(turn1A...))}},
		Jobs: []runrecord.JobRecord{{Kind: "conversation", Category: "default", Jobs: 3, Failed: 1, Duration: metricRecord(sketchOfValues(jobA...)),
			ModelMean: 100, ThinkMean: 10, ToolMean: 0, TurnsMean: 2, StepsMean: 2, TokensOut: 300}},
	}
	b.Conversations = &runrecord.ConversationRecord{
		Turns: []runrecord.TurnRecord{{Turn: 1, Cache: "miss", Calls: 6, TTFT: metricRecord(sketchOfValues(turn1B...))},
			{Turn: 2, Cache: "hit", Calls: 4, TTFT: metricRecord(sketchOfValues(turn2B...))}},
		Jobs: []runrecord.JobRecord{{Kind: "conversation", Category: "default", Jobs: 5, Duration: metricRecord(sketchOfValues(jobB...)),
			ModelMean: 200, ThinkMean: 50, ToolMean: 0, TurnsMean: 4, StepsMean: 4, TokensOut: 500}},
	}
	m, err := Merge(b, a)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Images) != 2 {
		t.Fatalf("merged images %+v", m.Images)
	}
	none, one := m.Images[0], m.Images[1]
	if none.Images != 0 || none.Calls != 8+15 || one.Images != 1 || one.Calls != 4 || one.Bytes != 4096 {
		t.Errorf("merged image groups %+v / %+v", none, one)
	}
	wantQuantiles(t, "TTFT without images", none.TTFT, append(append([]float64{}, noneA...), ttftB...))
	wantQuantiles(t, "TTFT with one image", one.TTFT, oneA)

	c := m.Conversations
	if c == nil || len(c.Turns) != 2 || len(c.Jobs) != 1 {
		t.Fatalf("merged conversations %+v", c)
	}
	if c.Turns[0].Calls != 11 || c.Turns[1].Calls != 4 || c.Turns[1].Cache != "hit" {
		t.Errorf("merged turns %+v", c.Turns)
	}
	wantQuantiles(t, "turn 1", c.Turns[0].TTFT, append(append([]float64{}, turn1A...), turn1B...))
	j := c.Jobs[0]
	if j.Jobs != 8 || j.Failed != 1 || j.TokensOut != 800 || j.ModelMean != (3*100+5*200)/8.0 || j.TurnsMean != (3*2+5*4)/8.0 {
		t.Errorf("merged job group %+v", j)
	}
	wantQuantiles(t, "job duration", j.Duration, append(append([]float64{}, jobA...), jobB...))

	text := RenderRecordText(m)
	for _, want := range []string{"TTFT by images in the prompt", "TTFT by conversation turn", "Conversations and agent jobs"} {
		if !strings.Contains(text, want) {
			t.Errorf("merged text lacks %q:\n%s", want, text)
		}
	}
	page := string(RenderRecordHTML(m, ""))
	for _, want := range []string{`<table id="images">`, `<table id="turns">`, `<table id="jobs">`} {
		if !strings.Contains(page, want) {
			t.Errorf("merged HTML lacks %q", want)
		}
	}
	// The merged file reads back (as a later run's baseline does) with its sections' sketches.
	raw, _, err := encodeRecord(m)
	if err != nil {
		t.Fatal(err)
	}
	back, err := runrecord.ParseRecord("merged.json", raw)
	if err != nil {
		t.Fatal(err)
	}
	wantQuantiles(t, "job duration read back", back.Conversations.Jobs[0].Duration, append(append([]float64{}, jobA...), jobB...))
	wantQuantiles(t, "TTFT without images read back", back.Images[0].TTFT, append(append([]float64{}, noneA...), ttftB...))
}

func TestMergeOfRecordsWithoutSectionsHasNone(t *testing.T) {
	m, err := Merge(sectionRecord("0:1/2", evenValues(3, 100, 1)), sectionRecord("1/2:1", evenValues(3, 100, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if m.Dispatch != nil || m.Retrieval != nil || m.Images != nil || m.Conversations != nil {
		t.Errorf("sections from nowhere: %+v %+v %+v %+v", m.Dispatch, m.Retrieval, m.Images, m.Conversations)
	}
}

func TestMergeRefusesASectionWithoutItsSketch(t *testing.T) {
	a, b := sectionRecord("0:1/2", evenValues(3, 100, 1)), sectionRecord("1/2:1", evenValues(3, 100, 1))
	b.Conversations = &runrecord.ConversationRecord{Turns: []runrecord.TurnRecord{{Turn: 1, Cache: "hit", Calls: 3, TTFT: &runrecord.MetricRecord{Count: 3, P50: 5}}}}
	b.Source = "b.json"
	_, err := Merge(a, b)
	if err == nil || !strings.Contains(err.Error(), "b.json") || !strings.Contains(err.Error(), "turn 1 hit ttft has no sketch") {
		t.Fatalf("merge of a turn without its sketch: %v", err)
	}
}
