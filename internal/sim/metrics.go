package sim

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
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

// serveMetrics writes the Prometheus text exposition (version 0.0.4).
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
