package sim

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// outcomeCounts counts finished requests by model and outcome.
type outcomeCounts struct {
	mu sync.Mutex
	n  map[[2]string]int64
}

func (c *outcomeCounts) add(model string, o Outcome) {
	c.mu.Lock()
	if c.n == nil {
		c.n = map[[2]string]int64{}
	}
	c.n[[2]string{model, string(o)}]++
	c.mu.Unlock()
}

func (c *outcomeCounts) snapshot() map[[2]string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[[2]string]int64, len(c.n))
	for k, v := range c.n {
		out[k] = v
	}
	return out
}

// serveMetrics writes the Prometheus text exposition (version 0.0.4): vLLM's
// families, exactly as vLLM exposes them, then llm-sim's own.
func (s *Server) serveMetrics(w http.ResponseWriter) {
	var b strings.Builder
	type series struct {
		name, typ, help string
		value           func(engineSnapshot) float64
	}
	snaps := make([]engineSnapshot, len(s.order))
	for i, m := range s.order {
		snaps[i] = m.eng.snapshot()
	}
	s.writeVLLM(&b, snaps)
	for _, se := range []series{
		{"llmsim_requests_waiting", "gauge", "Requests waiting for a running slot.", func(e engineSnapshot) float64 { return float64(e.waiting) }},
		{"llmsim_requests_running", "gauge", "Requests holding a running slot (prefill or decode).", func(e engineSnapshot) float64 { return float64(e.running) }},
		{"llmsim_prompt_tokens_total", "counter", "Prompt tokens of admitted requests.", func(e engineSnapshot) float64 { return float64(e.stats.promptTokens) }},
		{"llmsim_prefill_tokens_total", "counter", "Prompt tokens actually prefilled (not served from the prefix cache).", func(e engineSnapshot) float64 { return float64(e.stats.prefillTokens) }},
		{"llmsim_generation_tokens_total", "counter", "Output tokens generated.", func(e engineSnapshot) float64 { return float64(e.stats.generatedTokens) }},
		{"llmsim_engine_steps_total", "counter", "Engine steps run.", func(e engineSnapshot) float64 { return float64(e.stats.steps) }},
		{"llmsim_prefix_cache_queries_total", "counter", "Prompt tokens looked up in the prefix cache.", func(e engineSnapshot) float64 { return float64(e.stats.cacheQueries) }},
		{"llmsim_prefix_cache_hits_total", "counter", "Prompt tokens found in the prefix cache.", func(e engineSnapshot) float64 { return float64(e.stats.cacheHits) }},
		{"llmsim_prefix_cache_hit_rate", "gauge", "Cached share of looked-up prompt tokens since start (0 before any lookup).", func(e engineSnapshot) float64 {
			if e.stats.cacheQueries == 0 {
				return 0
			}
			return float64(e.stats.cacheHits) / float64(e.stats.cacheQueries)
		}},
		{"llmsim_prefix_cache_blocks", "gauge", "Blocks held in the prefix cache.", func(e engineSnapshot) float64 { return float64(e.cacheBlocks) }},
	} {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", se.name, se.help, se.name, se.typ)
		for i, m := range s.order {
			fmt.Fprintf(&b, "%s{model=\"%s\"} %g\n", se.name, promLabel(m.name), se.value(snaps[i]))
		}
	}
	counts := s.outcomes.snapshot()
	keys := make([][2]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i][0] != keys[j][0] {
			return keys[i][0] < keys[j][0]
		}
		return keys[i][1] < keys[j][1]
	})
	b.WriteString("# HELP llmsim_requests_total Generation requests finished, by outcome.\n# TYPE llmsim_requests_total counter\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "llmsim_requests_total{model=\"%s\",outcome=\"%s\"} %d\n", promLabel(k[0]), promLabel(k[1]), counts[k])
	}
	fmt.Fprintf(&b, "# HELP llmsim_connections_accepted_total Connections accepted since start.\n# TYPE llmsim_connections_accepted_total counter\nllmsim_connections_accepted_total %d\n", s.connSeq.Load())
	fmt.Fprintf(&b, "# HELP llmsim_connections_open Connections open now.\n# TYPE llmsim_connections_open gauge\nllmsim_connections_open %d\n", s.connOpen.Load())
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write([]byte(b.String()))
}

var promEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`) //nolint:gochecknoglobals // stateless

// promLabel escapes a Prometheus label value.
func promLabel(s string) string { return promEscaper.Replace(s) }

// vLLM's bucket bounds (vllm/v1/metrics/loggers.py), so a consumer reads
// llm-sim's histograms exactly as it reads vLLM's.
var (
	vllmTTFTBuckets    = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560} //nolint:gochecknoglobals // read-only
	vllmLatencyBuckets = []float64{0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680}                     //nolint:gochecknoglobals // read-only
	vllmReasons        = []string{"stop", "length", "abort", "error"}                                                                                //nolint:gochecknoglobals // read-only
)

// vllmHistogram is one histogram series: per-bucket (not cumulative) counts.
type vllmHistogram struct {
	bounds []float64
	counts []uint64 // len(bounds)+1: the last is +Inf
	sum    float64
	n      uint64
}

func (h *vllmHistogram) observe(v float64) {
	i := sort.SearchFloat64s(h.bounds, v) // first bound >= v: le is inclusive
	h.counts[i]++
	h.sum += v
	h.n++
}

// vllmHistograms are the per-request histograms, in exposition order.
var vllmHistograms = []struct { //nolint:gochecknoglobals // read-only table
	name, help string
	bounds     []float64
}{
	{"vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", vllmTTFTBuckets},
	{"vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", vllmLatencyBuckets},
	{"vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", vllmLatencyBuckets},
	{"vllm:request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.", vllmLatencyBuckets},
	{"vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.", vllmLatencyBuckets},
	{"vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.", vllmLatencyBuckets},
}

// modelRequests is what one model's finished requests add to the vLLM
// exposition.
type modelRequests struct {
	reasons map[string]uint64
	hists   []*vllmHistogram // as vllmHistograms
}

// requestMetrics records each request that reached the engine when it ends,
// from the same timeline the trace writes, so the exposition and the trace
// agree request for request.
type requestMetrics struct {
	mu     sync.Mutex
	models map[string]*modelRequests
}

func (r *requestMetrics) model(name string) *modelRequests {
	if r.models == nil {
		r.models = map[string]*modelRequests{}
	}
	m := r.models[name]
	if m == nil {
		m = &modelRequests{reasons: map[string]uint64{}}
		for _, h := range vllmHistograms {
			m.hists = append(m.hists, &vllmHistogram{bounds: h.bounds, counts: make([]uint64, len(h.bounds)+1)})
		}
		r.models[name] = m
	}
	return m
}

// countFinished counts g's request, once, in the vLLM exposition.
func (g *genState) countFinished(tl seqTimeline) {
	if g.counted {
		return
	}
	g.counted = true
	g.s.requests.finished(g.m.name, tl, g.rec.ArrivalNS, finishedReason(tl.Outcome, g.reason))
}

// finished counts a request the engine has ended. vLLM's definitions:
// TTFT and e2e from arrival; queue = queued → scheduled (admitted); prefill
// = scheduled → first token; decode = first → last token; inference =
// scheduled → last token. The engine's token times are used (when a token
// was produced, as vLLM's engine core stamps it), not when it was written.
func (r *requestMetrics) finished(model string, tl seqTimeline, arrivalNS int64, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.model(model)
	m.reasons[reason]++
	// On the trace's stamps, so each observation is the trace's own phase
	// duration (a wall-clock step mid-run moves neither).
	obs := func(i int, fromNS, toNS int64) {
		if fromNS != 0 && toNS != 0 && toNS >= fromNS {
			m.hists[i].observe(time.Duration(toNS - fromNS).Seconds())
		}
	}
	first, last := unixNano(tl.FirstToken), unixNano(tl.LastToken)
	enqueued, admitted := unixNano(tl.Enqueued), unixNano(tl.Admitted)
	obs(0, arrivalNS, first)
	obs(1, arrivalNS, last)
	obs(2, enqueued, admitted)
	obs(3, admitted, last)
	obs(4, admitted, first)
	obs(5, first, last)
}

// finishedReason is vLLM's finished_reason of a request the engine ended:
// its finish reason when it completed, error when it failed, abort when the
// client went away, the connection dropped or the server stopped.
func finishedReason(o Outcome, reason string) string {
	switch o {
	case OutcomeOK:
		if reason == "length" {
			return "length"
		}
		return "stop"
	case OutcomeError:
		return "error"
	default:
		return "abort"
	}
}

// writeVLLM writes vLLM's exposition of the models: gauges, counters with
// _total, request_success_total{finished_reason}, the request histograms,
// each series labelled model_name and engine (one engine per model here).
func (s *Server) writeVLLM(b *strings.Builder, snaps []engineSnapshot) {
	labels := make([]string, len(s.order))
	for i, m := range s.order {
		labels[i] = `engine="0",model_name="` + promLabel(m.name) + `"`
	}
	scalar := func(name, typ, help string, value func(engineSnapshot) (float64, bool)) {
		fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
		for i := range s.order {
			if v, ok := value(snaps[i]); ok {
				fmt.Fprintf(b, "%s{%s} %s\n", name, labels[i], strconv.FormatFloat(v, 'g', -1, 64))
			}
		}
	}
	always := func(f func(engineSnapshot) int64) func(engineSnapshot) (float64, bool) {
		return func(e engineSnapshot) (float64, bool) { return float64(f(e)), true }
	}
	scalar("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.", always(func(e engineSnapshot) int64 { return int64(e.running) }))
	scalar("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", always(func(e engineSnapshot) int64 { return int64(e.waiting) }))
	scalar("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", func(e engineSnapshot) (float64, bool) {
		if e.kvCapacity <= 0 {
			return 0, false // no KV capacity modelled (prefix cache off): unknown, not 0
		}
		return min(float64(e.kvBlocks)/float64(e.kvCapacity), 1), true
	})
	scalar("vllm:num_preemptions_total", "counter", "Cumulative number of preemption from the engine.", always(func(engineSnapshot) int64 { return 0 })) // llm-sim never preempts
	scalar("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.", always(func(e engineSnapshot) int64 { return e.stats.promptTokens }))
	scalar("vllm:generation_tokens_total", "counter", "Number of generation tokens processed.", always(func(e engineSnapshot) int64 { return e.stats.generatedTokens }))
	scalar("vllm:prefix_cache_queries_total", "counter", "Prefix cache queries, in terms of number of queried tokens.", always(func(e engineSnapshot) int64 { return e.stats.cacheQueries }))
	scalar("vllm:prefix_cache_hits_total", "counter", "Prefix cache hits, in terms of number of cached tokens.", always(func(e engineSnapshot) int64 { return e.stats.cacheHits }))

	s.writeSpecDecode(b, snaps, labels)

	s.requests.mu.Lock()
	defer s.requests.mu.Unlock()
	reqs := make([]*modelRequests, len(s.order))
	for i, m := range s.order {
		reqs[i] = s.requests.model(m.name)
	}
	b.WriteString("# HELP vllm:request_success_total Count of successfully processed requests.\n# TYPE vllm:request_success_total counter\n")
	for i := range s.order {
		for _, r := range vllmReasons {
			fmt.Fprintf(b, "vllm:request_success_total{%s,finished_reason=\"%s\"} %d\n", labels[i], r, reqs[i].reasons[r])
		}
	}
	for hi, h := range vllmHistograms {
		fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s histogram\n", h.name, h.help, h.name)
		for i := range s.order {
			vh := reqs[i].hists[hi]
			var cum uint64
			for bi, ub := range vh.bounds {
				cum += vh.counts[bi]
				fmt.Fprintf(b, "%s_bucket{%s,le=\"%s\"} %d\n", h.name, labels[i], strconv.FormatFloat(ub, 'g', -1, 64), cum)
			}
			fmt.Fprintf(b, "%s_bucket{%s,le=\"+Inf\"} %d\n", h.name, labels[i], vh.n)
			fmt.Fprintf(b, "%s_count{%s} %d\n", h.name, labels[i], vh.n)
			fmt.Fprintf(b, "%s_sum{%s} %s\n", h.name, labels[i], strconv.FormatFloat(vh.sum, 'g', -1, 64))
		}
	}
}
