package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/compare"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

func recordOf(t *testing.T, s synth) *runrecord.Record {
	t.Helper()
	rec, err := s.record()
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// record collects the synthetic run and reads its record back as a baseline.
func (s synth) record() (*runrecord.Record, error) {
	r := s.collect()
	b, err := MarshalRecord(r, Diagnose(r), nil, map[string]any{"k6": "v1.8.1", "seed": 7})
	if err != nil {
		return nil, err
	}
	return runrecord.LoadBaseline(b)
}

// unchanged says whether a row found no change: no significant one, or
// too few calls on a side to tell (and then really too few).
func unchanged(row runrecord.ComparisonRow) bool {
	if row.Verdict == runrecord.VerdictTooFew {
		return row.NeedCalls > 0 && min(row.Calls, row.BaselineCalls) < uint64(row.NeedCalls)
	}
	return row.Verdict == runrecord.VerdictSame
}

func verdicts(c *runrecord.Comparison, metric, stat string) map[string]string {
	out := map[string]string{}
	for _, row := range c.Rows {
		if row.Metric == metric && row.Stat == stat {
			out[row.Category] = row.Verdict
		}
	}
	return out
}

func TestCompareSameServiceIsNoChange(t *testing.T) {
	t.Parallel()
	base := recordOf(t, synth{seed: 1, stages: []synthStage{{16, 120}}})
	cur := synth{seed: 2, stages: []synthStage{{16, 120}}}.collect() // same service, other noise
	c := compare.Records(NewRecord(cur, nil, nil, nil), base)
	if len(c.Rows) == 0 {
		t.Fatal("no rows")
	}
	for _, row := range c.Rows {
		if !unchanged(row) {
			t.Errorf("%s %s %s: %s (Δ %.1f%%, CI [%.1f, %.1f])", row.Category, row.Metric, row.Stat, row.Verdict,
				100*row.DeltaPct, row.CILow, row.CIHigh)
		}
		if !row.HasCI {
			t.Errorf("%s %s: no confidence interval despite samples", row.Category, row.Metric)
		}
	}
}

func TestCompareDetectsRegressionAndImprovement(t *testing.T) {
	t.Parallel()
	base := recordOf(t, synth{seed: 1, stages: []synthStage{{16, 120}}})
	slower := synth{seed: 2, stages: []synthStage{{16, 120}}, queueMS: func(int) float64 { return 300 }}.collect()
	for cat, v := range verdicts(compare.Records(NewRecord(slower, nil, nil, nil), base), "ttft", "p50") {
		if v != runrecord.VerdictWorse {
			t.Errorf("%s: TTFT +300 ms judged %q", cat, v)
		}
	}
	faster := synth{seed: 3, stages: []synthStage{{16, 120}}, tpsAt: func(int) float64 { return 80 }}.collect()
	for cat, v := range verdicts(compare.Records(NewRecord(faster, nil, nil, nil), base), "tpot", "p50") {
		if v != runrecord.VerdictBetter {
			t.Errorf("%s: decode 50→80 tok/s judged %q for TPOT", cat, v)
		}
	}
}

func TestBootstrapIsDeterministic(t *testing.T) {
	t.Parallel()
	base := recordOf(t, synth{seed: 1, stages: []synthStage{{16, 60}}})
	cur := synth{seed: 2, stages: []synthStage{{16, 60}}}.collect()
	a, b := compare.Records(NewRecord(cur, nil, nil, nil), base), compare.Records(NewRecord(cur, nil, nil, nil), base)
	for i := range a.Rows {
		if a.Rows[i] != b.Rows[i] {
			t.Fatalf("row %d differs between two comparisons: %+v vs %+v", i, a.Rows[i], b.Rows[i])
		}
	}
}

func TestRecordP95(t *testing.T) {
	rec := recordOf(t, synth{seed: 1, stages: []synthStage{{16, 60}}})
	p, ok := rec.P95("short", "ttft")
	if !ok || p < 100*time.Millisecond || p > 2*time.Second {
		t.Fatalf("short TTFT P95 = %v, %v", p, ok)
	}
	all, ok := rec.P95(runrecord.AllCategories, "ttft")
	if !ok || all < p {
		t.Fatalf("all TTFT P95 %v should be at least the short one %v", all, p)
	}
	for _, bad := range [][2]string{{"nope", "ttft"}, {"short", "nope"}, {"short", "tokens_per_sec"}} {
		if _, ok := rec.P95(bad[0], record.Dist(bad[1])); ok {
			t.Errorf("P95(%q, %q) should be unknown", bad[0], bad[1])
		}
	}
	var nilRec *runrecord.Record
	if _, ok := nilRec.P95("short", "ttft"); ok {
		t.Error("nil record must have no P95")
	}
}

func TestLoadBaselineRejectsBadInput(t *testing.T) {
	good, err := MarshalRecord(synth{seed: 1, stages: []synthStage{{8, 30}}}.collect(), nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"empty":       nil,
		"not json":    []byte("hello"),
		"truncated":   good[:len(good)/2],
		"no format":   []byte(`{"categories":{}}`),
		"future":      []byte(`{"format":3,"categories":{"all":{}}}`),
		"format 0":    []byte(`{"format":0,"categories":{"all":{}}}`),
		"no cat v2":   []byte(`{"format":2,"categories":{}}`),
		"null cat v2": []byte(`{"format":2,"categories":{"a":null}}`),
		"no sketch":   []byte(`{"format":2,"categories":{"a":{"metrics":{"ttft":{"count":3}}}}}`),
		"v1 sketch":   []byte(`{"format":2,"categories":{"a":{"metrics":{"ttft":{"sketch":{"alpha":0.01,"counts":[1],"n":1}}}}}}`),
		"no category": []byte(`{"format":1,"categories":{}}`),
		"null cat":    []byte(`{"format":1,"categories":{"a":null}}`),
		"bad sketch":  bytes.Replace(good, []byte(`"alpha": 0.01`), []byte(`"alpha": 7`), 1),
		"bad counts":  bytes.Replace(good, []byte(`"n": `), []byte(`"n": 9`), 1),
		"wrong type":  []byte(`{"format":1,"categories":{"a":{"requests":"x"}}}`),
		"neg sample":  []byte(`{"format":1,"categories":{"a":{"samples":{"ttft":[-3]}}}}`),
	} {
		if _, err := runrecord.LoadBaseline(data); err == nil {
			t.Errorf("%s: accepted", name)
		} else if !strings.HasPrefix(err.Error(), "report: ") {
			t.Errorf("%s: unclear error %q", name, err)
		}
	}
}

func TestEmptyRunRecordsAndCompares(t *testing.T) {
	r := NewCollector(Options{}).Snapshot()
	b, err := MarshalRecord(r, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := runrecord.LoadBaseline(b)
	if err != nil {
		t.Fatalf("the record of an empty run must load: %v", err)
	}
	if _, ok := rec.P95(runrecord.AllCategories, "ttft"); ok {
		t.Fatal("an empty run has no P95")
	}
	if c := compare.Records(NewRecord(r, nil, nil, nil), rec); c == nil || len(c.Rows) != 0 {
		t.Fatalf("an empty run compares nothing: %+v", c)
	}
	if _, err := MarshalRecord(nil, nil, nil, nil); err == nil {
		t.Fatal("a nil run must be an error")
	}
}
