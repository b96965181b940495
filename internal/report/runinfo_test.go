package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/llmstream/xk6-llmstream/internal/report/compare"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

func TestComparisonSaysHowTheBaselineWasMadeDifferently(t *testing.T) {
	t.Parallel()
	baseRun := synth{seed: 1, stages: []synthStage{{16, 60}}}.collect()
	baseInfo := testInfo("")
	baseInfo.Load["default"].(map[string]any)["vus"] = 20
	base := recordThrough(t, "base.json", baseRun, baseInfo)

	cur := synth{seed: 2, stages: []synthStage{{16, 60}}}.collect()
	info := testInfo("")
	info.Load["default"].(map[string]any)["vus"] = 50
	info.Clients[0].Model = "m2"
	info.K6Version = "v1.9.0"
	cmp := compareWith(cur, base, info)
	want := []string{"clients.chat.model m2 vs m1", "load.default.vus 50 vs 20", "k6 v1.9.0 vs v1.8.1"}
	if len(cmp.Differences) != len(want) {
		t.Fatalf("differences %q, want %q", cmp.Differences, want)
	}
	for i, w := range want {
		if cmp.Differences[i] != w {
			t.Errorf("difference %d: %q, want %q", i, cmp.Differences[i], w)
		}
	}
	text, doc, rec, err := Render(cur, cmp, RenderOptions{Info: info})
	if err != nil {
		t.Fatal(err)
	}
	// In the text and the HTML the warning comes before the verdicts.
	line := "baseline differs (this run vs baseline): clients.chat.model m2 vs m1; load.default.vus 50 vs 20"
	if i, j := strings.Index(text, line), strings.Index(text, "figures changed significantly"); i < 0 || j < 0 || i > j {
		t.Errorf("text: warning at %d, verdicts at %d:\n%s", i, j, text)
	}
	if i, j := strings.Index(string(doc), `id="baseline-differs"`), strings.Index(string(doc), `<table id="comparison"`); i < 0 || i > j {
		t.Errorf("HTML: warning at %d, verdicts at %d", i, j)
	}
	var back struct {
		Comparison struct{ Differences []string } `json:"comparison"`
		Run        *runrecord.RunInfo             `json:"run"`
	}
	if err := json.Unmarshal(rec, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Comparison.Differences) != 3 || back.Run == nil || back.Run.Clients[0].Model != "m2" {
		t.Errorf("JSON record: %+v", back)
	}

	// Made alike: no warning at all.
	same := compareWith(cur, base, baseInfo)
	if len(same.Differences) != 0 || same.DifferencesLine() != "" {
		t.Errorf("same set-up reported as different: %q", same.Differences)
	}
	if txt := RenderText(cur, nil, same); strings.Contains(txt, "baseline differs") {
		t.Error("warning printed for a baseline made alike")
	}
	// A baseline without the information (older record): nothing can be said, nothing is claimed.
	old := recordThrough(t, "old.json", baseRun, nil)
	if d := compareWith(cur, old, info).Differences; len(d) != 0 {
		t.Errorf("differences claimed against a record without run information: %q", d)
	}
	// A half of a distributed run against a whole run.
	half := testInfo("0:1/2")
	if d := runrecord.Differences(half, baseInfo); len(d) == 0 || d[len(d)-1] != "execution segment 0:1/2 vs whole test" {
		t.Errorf("segment difference: %q", d)
	}
}

func TestMergedSampleIsProportionalToCallsSeen(t *testing.T) {
	vals := func(n int, v float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = v
		}
		return out
	}
	big := &runrecord.CategoryRecord{SamplesSeen: 3000, Samples: map[string][]float64{"ttft": vals(2000, 1)}}
	small := &runrecord.CategoryRecord{SamplesSeen: 1000, Samples: map[string][]float64{"ttft": vals(1000, 2)}}
	got, seen := mergeSamples("c", []*runrecord.CategoryRecord{big, small})
	ones, twos := 0, 0
	for _, v := range got["ttft"] {
		if v == 1 {
			ones++
		} else {
			twos++
		}
	}
	if seen != 4000 || ones != 1500 || twos != 500 {
		t.Errorf("seen %d, %d from the 3000-call instance and %d from the 1000-call one; want 1500 and 500", seen, ones, twos)
	}
	// Nobody sampled: the union is everything.
	a := &runrecord.CategoryRecord{SamplesSeen: 10, Samples: map[string][]float64{"ttft": vals(10, 1)}}
	b := &runrecord.CategoryRecord{SamplesSeen: 5, Samples: map[string][]float64{"ttft": vals(5, 2)}}
	if got, _ := mergeSamples("c", []*runrecord.CategoryRecord{a, b}); len(got["ttft"]) != 15 {
		t.Errorf("kept %d of 15 calls", len(got["ttft"]))
	}
}

func TestClientHostKeepsNoSecret(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:sk-secret@api.example.com:8443/v1/key/sk-path?api-key=sk-query#frag": "https://api.example.com:8443",
		"http://127.0.0.1:8080/v1":         "http://127.0.0.1:8080",
		"http://[::1]:9000":                "http://[::1]:9000",
		"not a url at all":                 "(not a URL)",
		"https://sk-secret@%zz/bad-escape": "(not a URL)",
	} {
		got := runrecord.ClientHost(in)
		if got != want {
			t.Errorf("ClientHost(%q) = %q, want %q", in, got, want)
		}
		if strings.Contains(got, "sk-") {
			t.Errorf("ClientHost(%q) kept a secret: %q", in, got)
		}
	}
}

// compareWith compares a run made as info says with a baseline, as report()
// does: through the run's record.
func compareWith(r *Run, base *runrecord.Record, info *runrecord.RunInfo) *runrecord.Comparison {
	rec := NewRecord(r, nil, nil, nil)
	rec.Run = info
	return compare.Records(rec, base)
}
