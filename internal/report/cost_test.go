package report

import (
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

func TestCostPerCategoryAndPer1000Calls(t *testing.T) {
	c := NewCollector(Options{})
	t0 := time.Unix(1_700_000_000, 0)
	for i := range 40 {
		cat := "short"
		cost, saved := 0.001, 0.0
		if i%2 == 1 {
			cat, cost, saved = "long", 0.01, 0.002
		}
		c.Add(&Observation{
			Result: &stream.Result{
				Start: t0.Add(time.Duration(i) * time.Second),
				End:   t0.Add(time.Duration(i)*time.Second + time.Second), OK: true, TTFT: measure.Of(100 * time.Millisecond),
				E2E: measure.Of(time.Second), TTFB: measure.Of(50 * time.Millisecond), TPOT: measure.Of(10 * time.Millisecond),
			},
			Origin:   record.Origin{Category: cat},
			Priced:   true,
			Cost:     config.Cost{Input: cost, Saved: saved},
			Currency: "EUR",
		})
	}
	c.Add(&Observation{
		Result: &stream.Result{Start: t0, End: t0.Add(time.Second), OK: true},
		Origin: record.Origin{Category: "short"},
	}) // a client without prices
	run := c.Snapshot()
	short, long, all := run.Category("short").Cost, run.Category("long").Cost, run.Category(runrecord.AllCategories).Cost
	if short.Calls != 20 || long.Calls != 20 || all.Calls != 40 {
		t.Fatalf("priced calls: short %d long %d all %d", short.Calls, long.Calls, all.Calls)
	}
	if math.Abs(short.Per1000()-1) > 1e-9 || math.Abs(long.Per1000()-10) > 1e-9 || math.Abs(all.Total-0.22) > 1e-9 {
		t.Fatalf("short %+v long %+v all %+v", short, long, all)
	}
	if math.Abs(all.Saved-0.04) > 1e-9 || all.Currency != "EUR" {
		t.Fatalf("saved %v currency %q", all.Saved, all.Currency)
	}
	text := RenderText(run, nil, nil)
	if !strings.Contains(text, "per 1000 calls") || !strings.Contains(text, "10.0000 EUR") {
		t.Fatalf("no cost table in the text report:\n%s", text)
	}
	// The table's columns line up under a heading wider than the labels.
	var head, row string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, "per 1000 calls") {
			head = l
		} else if head != "" && row == "" {
			row = l
		}
	}
	if end := func(s, w string) int { return utf8.RuneCountInString(s[:strings.Index(s, w)+len(w)]) }; end(head, "calls") != end(row, "20") {
		t.Fatalf("cost columns do not line up:\n%s\n%s", head, row)
	}
	if !strings.Contains(string(RenderHTML(run, nil, RenderOptions{})), `id="cost"`) {
		t.Fatal("no cost table in the HTML report")
	}
	rec := NewRecord(run, nil, nil, nil)
	if cr := rec.Categories[runrecord.AllCategories].Cost; cr == nil || cr.Calls != 40 || math.Abs(cr.Per1000Calls-5.5) > 1e-9 {
		t.Fatalf("record cost: %+v", cr)
	}
	// Two instances' costs add up (what Merge does per category).
	sum := rec.Categories["long"].Cost.Merge(rec.Categories["short"].Cost)
	if sum.Calls != 40 || math.Abs(sum.Total-0.22) > 1e-9 || math.Abs(sum.Per1000Calls-5.5) > 1e-9 {
		t.Fatalf("merged cost: %+v", sum)
	}
}

func TestCostWithoutPricesStaysOutOfTheReport(t *testing.T) {
	c := NewCollector(Options{})
	t0 := time.Unix(1_700_000_000, 0)
	c.Add(&Observation{
		Result: &stream.Result{Start: t0, End: t0.Add(time.Second), OK: true, TTFT: measure.Of(time.Millisecond), E2E: measure.Of(time.Second)},
	})
	run := c.Snapshot()
	if strings.Contains(RenderText(run, nil, nil), "per 1000 calls") {
		t.Fatal("a cost table without prices")
	}
	if NewRecord(run, nil, nil, nil).Categories[runrecord.AllCategories].Cost != nil {
		t.Fatal("a cost record without prices")
	}
}

// The report says how many gaps the gap-sample cap kept out of k6's metric,
// and keeps the count in the record.
func TestUnsampledGapsAreSaid(t *testing.T) {
	c := NewCollector(Options{})
	t0 := time.Unix(1_700_000_000, 0)
	for i := range 10 {
		c.Add(&Observation{
			Result: &stream.Result{
				Start: t0.Add(time.Duration(i) * time.Second),
				End:   t0.Add(time.Duration(i)*time.Second + time.Second), OK: true, TTFT: measure.Of(100 * time.Millisecond),
				E2E:  measure.Of(time.Second),
				Gaps: stream.GapsOf(20*time.Millisecond, 20*time.Millisecond, 20*time.Millisecond, 20*time.Millisecond),
			},
			GapsUnsampled: 3,
		})
	}
	run := c.Snapshot()
	if text := RenderText(run, nil, nil); !strings.Contains(text, "left out 30 of 40 gaps") {
		t.Fatalf("no word of the unsampled gaps:\n%s", text)
	}
	if n := NewRecord(run, nil, nil, nil).Categories[runrecord.AllCategories].GapsUnsampled; n != 30 {
		t.Fatalf("record: %d unsampled gaps, want 30", n)
	}
}
