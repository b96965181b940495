package report

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

func call(start time.Time, scenario string, ttftMS float64) *Observation {
	ttft := msD(ttftMS)
	return &Observation{
		Result: &stream.Result{
			Start: start, End: start.Add(ttft + 500*time.Millisecond), OK: true, TTFT: measure.Of(ttft),
			E2E: measure.Of(ttft + 500*time.Millisecond), OutputTokens: 20,
		},
		Origin: record.Origin{Scenario: scenario},
		VUs:    4,
		Active: 4,
	}
}

// A warm-up scenario with a cold server, setup() calls, tagged calls: none of
// them may reach the figures, and the record says what was left out.
func TestWarmupScenarioTagsAndSetupAreLeftOut(t *testing.T) {
	testStart := t0.Add(2 * time.Second)
	c := NewCollector(Options{Exclude: Exclude{
		Warmup: 10 * time.Second, Scenarios: []string{"warmup"}, Tags: map[string]string{"phase": "warmup"},
	}})
	add := func(o *Observation) { o.TestStart = testStart; c.Add(o) }
	// setup() runs before the test start.
	for i := range 3 {
		o := call(t0.Add(time.Duration(i)*100*time.Millisecond), "", 5000)
		o.Phase = PhaseSetup
		add(o)
	}
	var kept int
	for i := range 600 {
		at := testStart.Add(time.Duration(i) * 100 * time.Millisecond) // 60 s of calls
		switch {
		case i%10 == 0: // a parallel warm-up scenario, slow throughout
			add(call(at, "warmup", 4000))
		case i%10 == 1: // tagged calls of the main scenario
			o := call(at, "main", 3000)
			o.Tag = func(k string) (string, bool) { return map[string]string{"phase": "warmup", "x": "y"}[k], k == "phase" }
			add(o)
		case at.Before(testStart.Add(10 * time.Second)): // cold start of the main scenario
			add(call(at, "main", 2000))
		default:
			kept++
			add(call(at, "main", 100))
		}
	}
	o := call(testStart.Add(61*time.Second), "", 5000)
	o.Phase = PhaseTeardown
	add(o)

	run := c.Snapshot()
	all := run.Category(runrecord.AllCategories)
	if int(all.Requests) != kept {
		t.Fatalf("%d calls in the report, want the %d measured ones", all.Requests, kept)
	}
	if p99 := all.S(record.DistTTFT).Quantile(0.99); p99 > 110 {
		t.Fatalf("TTFT P99 %v: a left-out call reached the figures", p99)
	}
	ex := run.Excluded
	want := map[string]uint64{"setup()": 3, "teardown()": 1, "scenario warmup": 60, "tag phase=warmup": 60, "warm-up window": 80}
	for k, n := range want {
		if ex.ByReason[k] != n {
			t.Errorf("%s: %d left out, want %d (%v)", k, ex.ByReason[k], n, ex.ByReason)
		}
	}
	if ex.Calls != 204 || !ex.IncludedFrom.Equal(testStart.Add(10*time.Second)) {
		t.Errorf("calls %d, included from %v", ex.Calls, ex.IncludedFrom)
	}
	text, _, rec, err := Render(run, nil, RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "left out of this report: 204 calls") || !strings.Contains(text, "warm-up window 10s: 80") {
		t.Errorf("text does not say what was left out:\n%s", text)
	}
	var back struct {
		Excluded *runrecord.Exclusions `json:"excluded"`
	}
	if err := json.Unmarshal(rec, &back); err != nil || back.Excluded == nil || back.Excluded.Calls != 204 ||
		back.Excluded.Warmup != "10s" || back.Excluded.Scenarios[0] != "warmup" {
		t.Fatalf("record: %v %+v", err, back.Excluded)
	}
}

func TestSetupCallsCanBeKept(t *testing.T) {
	c := NewCollector(Options{Exclude: Exclude{KeepSetup: true}})
	o := call(t0, "", 100)
	o.Phase = PhaseSetup
	c.Add(o)
	if run := c.Snapshot(); run.Category(runrecord.AllCategories).Requests != 1 || run.Excluded.Summary() != "" {
		t.Fatalf("setup call not kept: %+v", run.Excluded)
	}
}

func TestWarmupWithoutTestStartCountsFromTheFirstCall(t *testing.T) {
	c := NewCollector(Options{Exclude: Exclude{Warmup: 5 * time.Second}})
	for i := range 10 {
		c.Add(call(t0.Add(time.Duration(i)*time.Second), "default", 100))
	}
	if n := c.Snapshot().Category(runrecord.AllCategories).Requests; n != 5 {
		t.Fatalf("%d calls kept, want the 5 after the first 5 s", n)
	}
}

func TestExcludeOptionsAreChecked(t *testing.T) {
	for _, o := range []Options{
		{Exclude: Exclude{Warmup: -time.Second}}, {Exclude: Exclude{Scenarios: []string{""}}},
		{Exclude: Exclude{Tags: map[string]string{"": "x"}}}, {MinStage: -1},
	} {
		if err := o.Validate(); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}
