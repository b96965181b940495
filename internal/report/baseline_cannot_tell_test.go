package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/llmstream/xk6-llmstream/internal/report/compare"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/servermetrics"
)

// chatRun is a run of n calls of one category whose TTFT centres on ttftMS;
// hitRate of them the server served from its prefix cache (every call's
// cache state known).
func chatRun(n int, seed uint64, ttftMS, hitRate float64) *Run {
	obs := synth{seed: seed, stages: []synthStage{{4, 3600}}, sharedPrefix: true, hitRate: hitRate,
		cats: []synthCat{{Name: "chat", Weight: 1, PromptTokens: 300, OutMin: 40, OutMax: 80, TTFTMS: ttftMS}}}.observations()
	return runOf(obs[:n]...)
}

func baselineRecord(t *testing.T, r *Run) *runrecord.Record {
	t.Helper()
	_, _, b, err := Render(r, nil, RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := runrecord.LoadBaseline(b)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func rowOf(t *testing.T, c *runrecord.Comparison, metric, stat string) runrecord.ComparisonRow {
	t.Helper()
	for _, row := range c.Rows {
		if row.Category == "chat" && row.Metric == metric && row.Stat == stat {
			return row
		}
	}
	t.Fatalf("no chat %s %s row", metric, stat)
	return runrecord.ComparisonRow{}
}

// A run of 32 calls twice as slow as its 400-call baseline: the medians
// tell (worse), the p95 and p99 do not — 32 calls bound neither — and the
// report says "too few calls" for them instead of a verdict either way.
func TestComparisonSaysTooFewCalls(t *testing.T) {
	t.Parallel()
	base := baselineRecord(t, chatRun(400, 1, 300, 0))
	text, doc, b, err := Render(chatRun(32, 2, 600, 0), nil, RenderOptions{Baseline: base})
	if err != nil {
		t.Fatal(err)
	}
	var rec runrecord.Record
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	if row := rowOf(t, rec.Comparison, "ttft", "p50"); row.Verdict != runrecord.VerdictWorse {
		t.Errorf("TTFT p50 twice as slow on 32 calls: %+v", row)
	}
	for _, stat := range []string{"p95", "p99"} {
		for _, metric := range []string{"ttft", "e2e", "tpot"} {
			row := rowOf(t, rec.Comparison, metric, stat)
			if row.Verdict != runrecord.VerdictTooFew || row.Calls != 32 || row.BaselineCalls != 400 {
				t.Errorf("%s %s: %+v", metric, stat, row)
			}
		}
	}
	if row := rowOf(t, rec.Comparison, "ttft", "p99"); row.NeedCalls != 368 {
		t.Errorf("a p99 needs 368 calls on each side, the row says %d", row.NeedCalls)
	}
	for _, want := range []string{
		"; 6 rest on too few calls to tell",
		"too few calls chat: ttft p95, ttft p99, e2e p95, e2e p99, tpot p95, tpot p99 (32 calls here, 400 in the baseline; a p95 needs 72, a p99 needs 368 on each side)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "worse   chat           ttft   p99") {
		t.Error("the text judges the p99 of 32 calls")
	}
	if !strings.Contains(string(doc), `<td class="few" title="32 calls here, 400 in the baseline; a p99 needs 368 on each side">too few calls</td>`) {
		t.Error("the HTML does not mark the p99 as too few calls")
	}
	// The same the other way round: a baseline of 32 calls decides no tail either.
	c := compare.Records(NewRecord(chatRun(400, 3, 150, 0), nil, nil, nil), baselineRecord(t, chatRun(32, 4, 300, 0)))
	if row := rowOf(t, c, "ttft", "p95"); row.Verdict != runrecord.VerdictTooFew {
		t.Errorf("against a 32-call baseline: %+v", row)
	}
	if row := rowOf(t, c, "ttft", "p50"); row.Verdict != runrecord.VerdictBetter {
		t.Errorf("TTFT p50 halved against a 32-call baseline: %+v", row)
	}
}

// A rerun against a warm prefix cache is faster with nothing changed: the
// comparison is confounded, and says so in the JSON, the text, the HTML and
// the findings, its "better" verdicts qualified.
func TestWarmRerunIsConfounded(t *testing.T) {
	t.Parallel()
	cold := baselineRecord(t, chatRun(400, 1, 300, 0))
	warm := chatRun(400, 2, 120, 0.9)
	text, doc, b, err := Render(warm, nil, RenderOptions{Baseline: cold})
	if err != nil {
		t.Fatal(err)
	}
	var rec runrecord.Record
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	cf := rec.Comparison.Confounded
	if cf == nil || cf.Margin != compare.CacheMargin || len(cf.By) != 1 || cf.By[0].Source != "client" ||
		cf.By[0].Baseline != 0 || cf.By[0].Current < 0.8 {
		t.Fatalf("confounded: %+v", cf)
	}
	if row := rowOf(t, rec.Comparison, "ttft", "p50"); row.Verdict != runrecord.VerdictBetter {
		t.Errorf("the statistics still say what they measured: %+v", row)
	}
	if !strings.Contains(text, "⚠ confounded: the runs saw different prefix-cache states (cache hit rate") ||
		!strings.Contains(text, "better (confounded) chat") {
		t.Errorf("the text does not qualify the warm rerun:\n%s", text)
	}
	if strings.Contains(text, "\n    better  chat") {
		t.Error("an unqualified better in the text")
	}
	if !strings.Contains(string(doc), `id="baseline-confounded"`) || !strings.Contains(string(doc), `<td class="confounded"`) {
		t.Error("the HTML does not mark the comparison as confounded")
	}
	f := findingByID(rec.Findings, "baseline_confounded")
	if f == nil || f.Values["baseline_hit_rate"] != 0 || f.Values["hit_rate"] < 0.8 {
		t.Fatalf("findings %v", ids(rec.Findings))
	}
	// Runs that saw the same cache state are not confounded.
	same := compare.Records(NewRecord(chatRun(400, 3, 120, 0.85), nil, nil, nil), baselineRecord(t, chatRun(400, 4, 120, 0.9)))
	if same.Confounded != nil {
		t.Errorf("hit rates within the margin: %+v", same.Confounded)
	}
}

// The server's own prefix-cache counters confound a comparison too (the
// client cannot always tell: a server that reports no cached tokens), and
// the findings of the comparison are qualified.
func TestServerCacheConfounds(t *testing.T) {
	t.Parallel()
	view := func(ratio float64, waitingMean float64) servermetrics.View {
		mean := waitingMean
		return servermetrics.View{Endpoint: "http://127.0.0.1:8000/metrics", Run: &servermetrics.Window{
			PrefixHitRatio: &ratio,
			Histograms:     map[string]servermetrics.HistStats{servermetrics.Queue: {Count: 100, Sum: ptr(mean / 10), Mean: &mean}},
		}}
	}
	r := chatRun(400, 1, 300, 0)
	base := baselineRecord(t, chatRun(400, 2, 300, 0))
	base.Server = []servermetrics.View{view(0.05, 0.05)}
	_, _, b, err := Render(r, nil, RenderOptions{Baseline: base, Server: []servermetrics.View{view(0.75, 0.5)}})
	if err != nil {
		t.Fatal(err)
	}
	var rec runrecord.Record
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	cf := rec.Comparison.Confounded
	if cf == nil || len(cf.By) != 1 || cf.By[0].Source != "server" || cf.By[0].Of != "http://127.0.0.1:8000/metrics" {
		t.Fatalf("confounded: %+v", cf)
	}
	confounded, regressed := findingByID(rec.Findings, "baseline_confounded"), findingByID(rec.Findings, "server_regressed")
	if confounded == nil || regressed == nil {
		t.Fatalf("findings %v", ids(rec.Findings))
	}
	if !strings.Contains(regressed.Title, "(confounded") || !strings.Contains(strings.Join(regressed.Evidence, "\n"), "baseline_confounded") {
		t.Errorf("server_regressed is not qualified: %+v", regressed)
	}
	first := -1
	for i, f := range rec.Findings {
		if f.ID == "baseline_confounded" || f.ID == "server_regressed" {
			if first < 0 {
				first = i
			}
		}
	}
	if rec.Findings[first].ID != "baseline_confounded" {
		t.Error("the cause comes after the change it qualifies")
	}
}
