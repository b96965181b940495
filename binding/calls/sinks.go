package calls

import (
	"sync"

	"github.com/llmstream/xk6-llmstream/binding/k6env"
	"github.com/llmstream/xk6-llmstream/binding/load"
	"github.com/llmstream/xk6-llmstream/binding/runstate"
	"github.com/llmstream/xk6-llmstream/internal/policy"
	"github.com/llmstream/xk6-llmstream/internal/sample"
)

// Where finished calls go, shared by every Client of a VU (and the gap
// samplers and capacity searches by every VU): fanout.go sends each call
// there.

// sinks are where finished calls go: k6's metrics, the report's collectors
// (with the baseline behind llm_regression) and the capacity searches.
type Sinks struct {
	Metrics    *k6env.LLMMetrics
	Report     *runstate.ReportState
	Samplers   *GapSamplers
	LagWarning *policy.LagWarning
	Searches   *load.SearchList // capacity searches, fed every finished call
	Gates      *load.GateList   // precision gates, fed every finished call
}

// gapSamplers are the process-wide samplers of gapSamples 'sampled', one per
// cap (Clients with the same gapSampleRate share one budget).
type GapSamplers struct {
	mu sync.Mutex
	m  map[int]*sample.Sampler
}

func (g *GapSamplers) get(rate int) *sample.Sampler {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = map[int]*sample.Sampler{}
	}
	s, ok := g.m[rate]
	if !ok {
		s = sample.New(float64(rate))
		g.m[rate] = s
	}
	return s
}
