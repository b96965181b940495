package calls

import (
	"context"
	"testing"
	"time"

	"go.k6.io/k6/metrics"

	"github.com/llmstream/xk6-llmstream/binding/k6env"
	"github.com/llmstream/xk6-llmstream/binding/runstate"
	"github.com/llmstream/xk6-llmstream/internal/benchcpu"
	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/protocol"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// shortAnswer is a finished 4-token answer as a call's stream ends it: its
// timings, three gaps, usage and the server's request id.
func shortAnswer(start time.Time) *stream.Result {
	return &stream.Result{
		OK: true, Sent: true, Status: 200, Cache: stream.CacheMiss, RequestID: "req-42", Proto: "HTTP/1.1",
		FinishReason: "stop", TokenSource: stream.TokensFromStreamedUsage, Usage: &protocol.Usage{PromptTokens: 12, CompletionTokens: 4},
		TTFB: measure.Of(200 * time.Microsecond), TTFT: measure.Of(300 * time.Microsecond),
		TTFTAnswer: measure.Of(300 * time.Microsecond), E2E: measure.Of(400 * time.Microsecond),
		TPOT: measure.Of(30 * time.Microsecond), TokensPerSec: 30000, ClientParse: 20 * time.Microsecond,
		Chunks: 6, OutputTokens: 4, Gaps: stream.Gaps{30, 30, 30}, GapMean: measure.Of(30 * time.Microsecond),
		SendWait: measure.Of(10 * time.Microsecond),
		Start:    start, FirstOutAt: start.Add(300 * time.Microsecond), LastOutAt: start.Add(390 * time.Microsecond),
		End: start.Add(400 * time.Microsecond),
	}
}

// BenchmarkFanOut is a finished call's fan-out alone, per operation: its
// record, its k6 samples (tagged, in one batch, read as k6's engine takes
// them) and the report's intake, for a short answer with gapSamples
// 'event', as every call of a test that ended alike.
//
//	go test -run '^$' -bench FanOut -benchmem ./binding/calls
func BenchmarkFanOut(b *testing.B) {
	reg := metrics.NewRegistry()
	m, err := (&k6env.MetricTables{}).Get(reg)
	if err != nil {
		b.Fatal(err)
	}
	rt := testRoute(reg, record.Origin{Name: "c", Route: routePrimary, Protocol: "openai", Model: "m",
		Category: "chat", Scenario: "default", GapSamples: config.GapsPerEvent, RequestBytes: 120})
	rt.Info.tagRoute = false
	rt.Info.tagMemo = &tagMemo{}
	rt.Info.tagGet = (&tagGetter{}).of(rt.Info.tags.Tags) // as a client's plan sets it
	s := Sinks{Metrics: m, Report: &runstate.ReportState{}}
	out := make(chan metrics.SampleContainer, 1)
	ctx := context.Background()
	start := time.Now()
	// The calls' outcomes are made a chunk at a time, off the clock: a
	// call's result is its stream's work, not the fan-out's.
	const chunk = 1024
	calls := make([]*outcome, chunk)
	var cpu time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += chunk {
		b.StopTimer()
		n := min(chunk, b.N-i)
		for j := range n {
			at := start.Add(time.Duration(i+j) * time.Millisecond)
			calls[j] = &outcome{Attempts: []attempt{{Route: rt, Result: shortAnswer(at)}}}
		}
		b.StartTimer()
		before := benchcpu.Process(b)
		for _, o := range calls[:n] {
			fanOut(ctx, o, out, s, callLoad{active: 1, vus: 1})
			<-out
		}
		cpu += benchcpu.Process(b) - before
	}
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
}
