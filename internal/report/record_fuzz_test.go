package report

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// A run record comes from a file a user names: whatever its bytes, reading
// it (and merging it) gives a record or an error, never a panic. The sketch
// buckets go through sketches-go's decoder, which is not written for hostile
// input, so this matters.
//
// The seeds are small on purpose: the fuzzer minimises every new input it
// finds, which takes minutes on a 30 KB record.
func FuzzParseRecord(f *testing.F) {
	c := NewCollector(Options{Start: t0})
	for i := range 3 {
		c.Add(&Observation{
			Result: &stream.Result{
				Start: t0, End: t0.Add(time.Second), OK: true, TTFT: measure.Of(time.Duration(100+i) * time.Millisecond),
				E2E: measure.Of(time.Second), OutputTokens: 10,
			},
			Origin: record.Origin{Category: "short"},
		})
	}
	r := c.Snapshot()
	rec := NewRecord(r, nil, nil, nil)
	rec.Run = &runrecord.RunInfo{Segment: "0:1/2", Clients: []runrecord.ClientInfo{{Name: "a", Protocol: "openai-chat", Host: "http://127.0.0.1"}}}
	rec.Categories = map[string]*runrecord.CategoryRecord{runrecord.AllCategories: rec.Categories[runrecord.AllCategories]}
	if v2, err := json.Marshal(rec); err == nil {
		f.Add(v2)
	}
	f.Add([]byte(`{"format":1,"categories":{"all":{"requests":2,"metrics":{"ttft":{"count":2,"sketch":` +
		`{"alpha":0.01,"zero":1,"offset":230,"counts":[1],"n":2,"sum":100,"min":0,"max":100}}}}}}`))
	f.Add([]byte(`{"format":2,"categories":{"all":{"metrics":{"ttft":{"sketch":{"alpha":0.01,"n":1,"sum":1,"min":1,"max":1,"ddsketch":"AgAAAAAAAAAAAAAAAAAA8D8="}}}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := runrecord.ParseRecord("fuzz.json", data)
		if err != nil {
			return
		}
		for _, cr := range rec.Categories {
			for _, mr := range cr.Metrics {
				_ = mr.Sketch.Quantile(0.99)
				mr.Sketch.Bins(func(float64, float64, uint64) {})
			}
		}
		if rec.Run != nil {
			other := *rec.Run
			other.Segment = "1/2:1"
			_, _ = Merge(rec, &runrecord.Record{Format: runrecord.RecordFormat, Categories: rec.Categories, Run: &other})
		}
	})
}
