package report

import (
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// callsRun is a run of exactly n chat calls of one category, "chat".
func callsRun(n int, seed uint64) *Run {
	obs := synth{seed: seed, stages: []synthStage{{4, 3600}},
		cats: []synthCat{{Name: "chat", Weight: 1, PromptTokens: 300, OutMin: 40, OutMax: 80, TTFTMS: 300}}}.observations()
	return runOf(obs[:n]...)
}

// renderRun renders a run and reads its record back as a baseline would.
func renderRun(t *testing.T, r *Run) (string, string, *runrecord.Record) {
	t.Helper()
	text, doc, b, err := Render(r, nil, RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := runrecord.ParseRecord("run.json", b)
	if err != nil {
		t.Fatal(err)
	}
	return text, string(doc), rec
}

// textRow is the text report's latency row of a metric and category.
func textRow(t *testing.T, text, metric, cat string) string {
	t.Helper()
	re := regexp.MustCompile(`(?m)^  ` + metric + ` +` + cat + ` .*$`)
	row := re.FindString(text)
	if row == "" {
		t.Fatalf("no %s row for %s in\n%s", metric, cat, text)
	}
	return row
}

var intervalCell = regexp.MustCompile(`\d+(\.\d+)?(ms|s) \[\d+(\.\d+)?–\d+(\.\d+)?\]`)

// The done criterion's first half: 32 calls give the TTFT p95 and p99 what
// the calls can say, a lower end, and mark both as resting on too few
// calls (72 and 368 needed); the median has its interval.
func TestThirtyTwoCallsMarkTheirTail(t *testing.T) {
	r := callsRun(32, 1)
	text, doc, rec := renderRun(t, r)
	mr := rec.Categories["chat"].Metrics["ttft"]
	if mr.Count != 32 || mr.P95CI == nil || mr.P99CI == nil || mr.P50CI == nil {
		t.Fatalf("ttft record: %+v", mr)
	}
	if !slices.Equal(mr.TooFew, []string{"p95", "p99"}) {
		t.Errorf("too_few %v, want p95 and p99", mr.TooFew)
	}
	if mr.P95CI[0] == nil || mr.P95CI[1] != nil || mr.P99CI[0] == nil || mr.P99CI[1] != nil {
		t.Errorf("a tail of 32 calls has a lower end only: p95 %v p99 %v", mr.P95CI, mr.P99CI)
	}
	if *mr.P95CI[0] > mr.P95 || *mr.P99CI[0] > mr.P99 || mr.P99 <= 0 {
		t.Errorf("lower ends above their figures: p95 %g ≥ %g, p99 %g ≥ %g", mr.P95, *mr.P95CI[0], mr.P99, *mr.P99CI[0])
	}
	if mr.P50CI[0] == nil || mr.P50CI[1] == nil || !(*mr.P50CI[0] <= mr.P50 && mr.P50 <= *mr.P50CI[1]) {
		t.Errorf("median of 32 calls: %g in %v", mr.P50, mr.P50CI)
	}
	row := textRow(t, text, "ttft", "chat")
	if len(intervalCell.FindAllString(row, -1)) != 1 || strings.Count(row, "≥") != 2 || strings.Count(row, tooFewMark) != 2 {
		t.Errorf("the row should give the median's interval and mark p95 and p99:\n%s", row)
	}
	if !strings.Contains(text, "too few calls to bound the percentile (a p95 needs 72, a p99 368)") {
		t.Errorf("no legend of the star in\n%s", text)
	}
	if !strings.Contains(doc, `title="too few calls to bound the p99: 32 of the 368 it needs"`) ||
		!strings.Contains(doc, `title="too few calls to bound the p95: 32 of the 72 it needs"`) {
		t.Error("the HTML does not mark the tail as resting on too few calls")
	}
	// The record's JSON keeps the existing keys beside the new ones.
	var raw map[string]any
	b, _ := json.Marshal(mr)
	_ = json.Unmarshal(b, &raw)
	for _, k := range []string{"count", "p50", "p95", "p99", "p50_ci", "p95_ci", "p99_ci", "too_few", "sketch"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("ttft record lacks %q: %s", k, b)
		}
	}
}

// The done criterion's second half: 400 calls bound p50, p95 and p99, and
// the text prints each with its interval around the figure.
func TestFourHundredCallsPrintIntervals(t *testing.T) {
	r := callsRun(400, 2)
	text, doc, rec := renderRun(t, r)
	for _, metric := range []string{"ttft", "e2e", "tpot"} {
		mr := rec.Categories["chat"].Metrics[metric]
		if len(mr.TooFew) != 0 {
			t.Errorf("%s: too few %v from 400 calls", metric, mr.TooFew)
		}
		for _, c := range []struct {
			v  float64
			ci *runrecord.CI
		}{{mr.P50, mr.P50CI}, {mr.P95, mr.P95CI}, {mr.P99, mr.P99CI}} {
			if c.ci == nil || c.ci[0] == nil || c.ci[1] == nil || !(*c.ci[0] <= c.v && c.v <= *c.ci[1] && *c.ci[0] < *c.ci[1]) {
				t.Errorf("%s: %g outside its interval %v", metric, c.v, c.ci)
			}
		}
		row := textRow(t, text, metric, "chat")
		if n := len(intervalCell.FindAllString(row, -1)); n != 3 || strings.Contains(row, tooFewMark) {
			t.Errorf("%s: %d intervals in\n%s", metric, n, row)
		}
	}
	if strings.Contains(text, "too few calls") || strings.Contains(doc, `class="few"`) {
		t.Error("400 calls marked as too few")
	}
	if !strings.Contains(doc, `<span class="ci">[`) || !strings.Contains(doc, `id="latency-legend"`) {
		t.Error("the HTML gives no interval beside its percentiles")
	}
	// Gaps are many to a call: no interval pretends they are independent.
	if g := rec.Categories["chat"].Metrics["gap"]; g == nil || g.P95CI != nil || g.TooFew != nil {
		t.Errorf("gap record: %+v", g)
	}
	if strings.Contains(textRow(t, text, "gap", "chat"), "[") {
		t.Error("the gap row has intervals")
	}
}

// The text's columns stay aligned: every latency row is as wide as its
// header, intervals and marks included.
func TestLatencyColumnsStayAligned(t *testing.T) {
	for _, n := range []int{5, 32, 400} {
		text, _, _ := renderRun(t, callsRun(n, 3))
		header := regexp.MustCompile(`(?m)^  metric .*$`).FindString(text)
		for _, metric := range []string{"ttft", "e2e", "tpot"} {
			row := textRow(t, text, metric, "all")
			if len([]rune(row)) != len([]rune(header)) {
				t.Errorf("%d calls: %s row %d wide, header %d:\n%s\n%s", n, metric, len([]rune(row)), len([]rune(header)), header, row)
			}
		}
	}
}

// A merged record's intervals come from its merged sketches: two
// instances of 200 calls each leave their p99 open, the merge of them
// bounds it exactly as the 400-call run does.
func TestMergedRecordIntervalsFromMergedSketches(t *testing.T) {
	obs := synth{seed: 4, stages: []synthStage{{4, 3600}},
		cats: []synthCat{{Name: "chat", Weight: 1, PromptTokens: 300, OutMin: 40, OutMax: 80, TTFTMS: 300}}}.observations()[:400]
	var a, b []*Observation
	for i, o := range obs {
		if i%2 == 0 {
			a = append(a, o)
		} else {
			b = append(b, o)
		}
	}
	ra := recordThrough(t, "a.json", runOf(a...), testInfo("0:1/2"))
	rb := recordThrough(t, "b.json", runOf(b...), testInfo("1/2:1"))
	whole := recordThrough(t, "whole.json", runOf(obs...), testInfo(""))
	if !slices.Contains(ra.Categories["chat"].Metrics["ttft"].TooFew, "p99") {
		t.Fatalf("an instance of 200 calls bounds its p99: %+v", ra.Categories["chat"].Metrics["ttft"])
	}
	merged, err := Merge(ra, rb)
	if err != nil {
		t.Fatal(err)
	}
	got, want := merged.Categories["chat"].Metrics["ttft"], whole.Categories["chat"].Metrics["ttft"]
	if len(got.TooFew) != 0 || got.P99CI == nil || got.P99CI[1] == nil {
		t.Fatalf("merged ttft: %+v", got)
	}
	for i, c := range [][2]*runrecord.CI{{got.P50CI, want.P50CI}, {got.P95CI, want.P95CI}, {got.P99CI, want.P99CI}} {
		for end := range 2 {
			if math.Abs(*c[0][end]-*c[1][end]) > 1e-9 {
				t.Errorf("percentile %d end %d: merged %g, whole run %g", i, end, *c[0][end], *c[1][end])
			}
		}
	}
	text := RenderRecordText(merged)
	if n := len(intervalCell.FindAllString(textRow(t, text, "ttft", "chat"), -1)); n != 3 {
		t.Errorf("merged text: %d intervals in the ttft row\n%s", n, text)
	}
	if !strings.Contains(string(RenderRecordHTML(merged, "")), `<span class="ci">[`) {
		t.Error("the merged HTML gives no interval")
	}
}

// Stages carry their percentiles' intervals in the record and the text.
func TestStageIntervals(t *testing.T) {
	r := synth{seed: 5, stages: steps(2, 8)}.collect()
	text, _, rec := renderRun(t, r)
	if len(rec.Stages) < 2 {
		t.Fatalf("%d stages", len(rec.Stages))
	}
	for _, st := range rec.Stages {
		if st.TTFTP95CI == nil || st.TTFTP50CI == nil || st.TokensPerSecP50CI == nil {
			t.Errorf("stage %v: %+v", st.Concurrency, st)
		}
		few := st.Calls < 72
		if slices.Contains(st.TooFew, "ttft_p95") != few {
			t.Errorf("stage of %d calls: too few %v", st.Calls, st.TooFew)
		}
	}
	stageRows := regexp.MustCompile(`(?m)^  (2|8) +\d+ .*$`).FindAllString(text, -1)
	if len(stageRows) != 2 {
		t.Fatalf("stage rows %q in\n%s", stageRows, text)
	}
	for _, row := range stageRows {
		if len(intervalCell.FindAllString(row, -1)) < 1 {
			t.Errorf("stage row without interval: %s", row)
		}
	}
}

// A section's HTML table puts an interval under its figure and marks a
// figure too few calls bound; other cells stay as they are.
func TestSectionCellsInHTML(t *testing.T) {
	for in, want := range map[string]string{
		"412ms [398–431]":           `412ms<br><span class="ci">[398–431]</span>`,
		"≥602ms*":                   `<span class="few" title="too few calls to bound this percentile">≥602ms*</span>`,
		"over-saturated: p95 [x]":   "over-saturated: p95 [x]",
		"a <b>":                     "a &lt;b&gt;",
		"ttft p95 412ms [398–431]*": "ttft p95 412ms [398–431]*",
	} {
		if got := htmlCell(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}
