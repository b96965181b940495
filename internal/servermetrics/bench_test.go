package servermetrics

import (
	"bytes"
	"context"
	"testing"
	"time"
)

// exposition300 is a vLLM final fixture with a third engine's copy of every
// engine-0 series: about 300 sample lines, a mid-size vLLM /metrics.
func exposition300(b *testing.B) []byte {
	b.Helper()
	body := fixture(&testing.T{}, "vllm_final.txt")
	var extra []byte
	for _, line := range bytes.SplitAfter(body, []byte("\n")) {
		if bytes.Contains(line, []byte(`engine="0"`)) {
			extra = append(extra, bytes.ReplaceAll(line, []byte(`engine="0"`), []byte(`engine="2"`))...)
		}
	}
	// The copies carry no TYPE line: a family's samples may follow later.
	out := append(append([]byte(nil), body...), extra...)
	n := 0
	for _, line := range bytes.Split(out, []byte("\n")) {
		if len(line) > 0 && line[0] != '#' {
			n++
		}
	}
	b.ReportMetric(float64(n), "series")
	return out
}

// BenchmarkScrapeCPU is the CPU one scrape costs once the body is in hand:
// parse, reduce to canonical quantities, fold into the history.
func BenchmarkScrapeCPU(b *testing.B) {
	body := exposition300(b)
	acc := newAccumulator()
	h := &history{max: defaultMaxPoints}
	at := time.Now()
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for i := range b.N {
		p, err := parseBody(body, "text/plain; version=0.0.4")
		if err != nil || p.skipped > 0 {
			b.Fatal(err, p.skipped)
		}
		pt, _ := acc.add(at.Add(time.Duration(i)*time.Second), reduce(p.families, ""))
		h.add(pt)
	}
}

// BenchmarkScrapeLoopback is a whole scrape over loopback HTTP.
func BenchmarkScrapeLoopback(b *testing.B) {
	body := exposition300(b)
	ep := newEndpoint(&testing.T{}, body)
	defer ep.srv.Close()
	s, err := New(Config{URL: ep.url(), Interval: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s.scrape(context.Background(), s.cfg.Timeout, false, false)
	}
	b.StopTimer()
	if s.View(nil).Failed > 0 {
		b.Fatal("a scrape failed")
	}
}
