package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/llmstream/xk6-llmstream/internal/report"
)

// printTables prints one Markdown table per shape, the two clients of a level
// side by side, and the ratio of the module's error to the floor's.
func printTables(w io.Writer, s settings, results []result) {
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(w, "\nllm-sim: decode step %g ms, +%g ms before the first token; answers %d–%d tokens (staggered) or %d (uniform); "+
		"%s per client and level; k6: %d streams per VU; load average now %s\n",
		s.decodeMs, s.ttftMs, s.minTokens, s.maxTokens, s.maxTokens, s.duration, s.streamsPerVU, strings.Fields(string(load) + " ?")[0])
	fmt.Fprintln(w, "errors are client − server (llm-sim's trace), ms, p50 / p99 / max")
	for _, shape := range s.shapes {
		fmt.Fprintf(w, "\n%s answers\n\n", shape)
		fmt.Fprintln(w, "| streams | client | answers (joined) | opened a connection | TTFT error | read-side error | gap error | TTFT error: new conn p50 / reused conn p50, p99 | client CPU s | llm-sim CPU s | connections |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|")
		byLevel := map[int]map[string]result{}
		for _, r := range results {
			if r.shape != shape {
				continue
			}
			if byLevel[r.streams] == nil {
				byLevel[r.streams] = map[string]result{}
			}
			byLevel[r.streams][r.client] = r
			e := r.e
			reused := distOf(e.ttftReused)
			fmt.Fprintf(w, "| %d | %s | %d (%d) | %d | %s | %s | %s | %.2f / %.2f, %.2f | %.1f | %.1f | %d |\n",
				r.streams, r.client, e.calls, e.joined, e.newConn, distOf(e.ttft), distOf(e.read), distOf(e.gap),
				distOf(e.ttftNewConn).p50, reused.p50, reused.p99, r.clientCPU, r.simCPU, r.connections)
		}
		fmt.Fprintln(w, "\nratio to bare (goal ≤ 1.25): TTFT error p50, p99; gap error p99; TTFT error p99 on reused connections; the module's own lag and what client_bound says of it")
		for _, n := range s.levels {
			b := byLevel[n]["bare"]
			for _, c := range s.clients {
				k := byLevel[n][c]
				if c == "bare" || k.e == nil || b.e == nil {
					continue
				}
				kt, bt, kg, bg := distOf(k.e.ttft), distOf(b.e.ttft), distOf(k.e.gap), distOf(b.e.gap)
				kr, br := distOf(k.e.ttftReused), distOf(b.e.ttftReused)
				fmt.Fprintf(w, "  %5d streams, %s: %.2f  %.2f  %.2f  %.2f%s%s\n", n, c, kt.p50/bt.p50, kt.p99/bt.p99, kg.p99/bg.p99, kr.p99/br.p99,
					lagVerdict(k.e.lag), fewAnswers(min(k.e.joined, b.e.joined)))
			}
		}
	}
}

// lagVerdict is the module's client lag at a level (result.clientLag, ms) and
// whether the report's client_bound rule fires on it (internal/report's
// ClientLagP50MS / ClientLagP95MS).
func lagVerdict(lag []float64) string {
	if len(lag) == 0 {
		return ""
	}
	s := slices.Clone(lag)
	slices.Sort(s)
	p50, p95 := quantile(s, 0.5), quantile(s, 0.95)
	verdict := "silent"
	if p50 >= report.ClientLagP50MS || p95 >= report.ClientLagP95MS {
		verdict = "client_bound fires"
	}
	return fmt.Sprintf("   lag p50 %.1f / p95 %.1f ms: %s", p50, p95, verdict)
}

// fewAnswers warns when a level had too few answers for its p99 to be more
// than its largest value (1 stream for 15 s gives about five).
func fewAnswers(n int) string {
	if n >= 100 {
		return ""
	}
	return fmt.Sprintf(" (only %d answers: the TTFT p99 is their largest)", n)
}
