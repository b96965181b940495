package report

import (
	"bytes"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/llmstream/xk6-llmstream/internal/report/compare"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// testdata/record-format1.json was written by the module before sketches moved
// to sketches-go (a 30 s synthetic run, 4 VUs), with the figures that version
// computed from its own sketches stored next to each sketch.
const v1Fixture = "testdata/record-format1.json"

func TestFormat1RecordLoadsAsBaselineWithTheSameFigures(t *testing.T) {
	data, err := os.ReadFile(v1Fixture)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(`"format": 1`)) || !bytes.Contains(data, []byte(`"counts": [`)) {
		t.Fatal("fixture is not a format-1 record")
	}
	rec, err := runrecord.ParseRecord(v1Fixture, data)
	if err != nil {
		t.Fatalf("a format-1 record must still load: %v", err)
	}
	if rec.Format != runrecord.RecordFormat {
		t.Errorf("converted record says format %d", rec.Format)
	}
	checked := 0
	for cat, cr := range rec.Categories {
		for name, mr := range cr.Metrics {
			s := mr.Sketch
			if s.Count() != mr.Count {
				t.Errorf("%s/%s: %d values in the sketch, %d recorded", cat, name, s.Count(), mr.Count)
			}
			// The old code's own quantiles, from the same buckets: the
			// conversion keeps every bucket and its representative value.
			for _, c := range []struct {
				q    float64
				want float64
			}{{0.5, mr.P50}, {0.95, mr.P95}, {0.99, mr.P99}} {
				if got := s.Quantile(c.q); math.Abs(got-c.want) > 1e-9*math.Abs(c.want) {
					t.Errorf("%s/%s q%g: %g after conversion, %g before", cat, name, c.q, got, c.want)
				}
				checked++
			}
		}
	}
	if checked < 30 {
		t.Fatalf("only %d figures checked: fixture too small", checked)
	}
	if _, ok := rec.P95(runrecord.AllCategories, "ttft"); !ok {
		t.Error("converted record has no TTFT P95")
	}
	// The same run, collected again by this version, compares equal to it.
	cur := synth{seed: 1, stages: []synthStage{{4, 30}}}.collect()
	c := compare.Records(NewRecord(cur, nil, nil, nil), rec)
	if c == nil || len(c.Rows) == 0 {
		t.Fatal("no comparison against the converted baseline")
	}
	for _, row := range c.Rows {
		if !unchanged(row) || math.Abs(row.Delta) > 1e-9 {
			t.Errorf("the same run judged %q (Δ %g) against its converted record: %+v", row.Verdict, row.Delta, row)
		}
	}
}

func TestUnknownRecordFormatIsRefusedNamingFileAndFormat(t *testing.T) {
	data, err := os.ReadFile(v1Fixture)
	if err != nil {
		t.Fatal(err)
	}
	future := bytes.Replace(data, []byte(`"format": 1`), []byte(`"format": 9`), 1)
	_, err = runrecord.ParseRecord("runs/old.json", future)
	if err == nil {
		t.Fatal("a record of an unknown format must be refused")
	}
	for _, want := range []string{"runs/old.json", "format 9", "formats 1 and 2"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	// A format-1 record whose sketch is corrupt is refused, not half-converted.
	bad := bytes.Replace(data, []byte(`"zero": 0`), []byte(`"zero": 5`), 1)
	_, err = runrecord.ParseRecord("runs/old.json", bad)
	if err == nil || !strings.Contains(err.Error(), "runs/old.json") || !strings.Contains(err.Error(), "format 1") {
		t.Fatalf("corrupt format-1 sketch: %v", err)
	}
}
