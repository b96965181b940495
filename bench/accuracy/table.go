package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/llmstream/xk6-llmstream/internal/report"
)

// printTables prints one Markdown table per shape, the two clients of a level
// side by side, and the ratio of the module's error to the floor's.
func printTables(w io.Writer, s settings, results []result) {
	load, _ := os.ReadFile("/proc/loadavg")
	over := ""
	if s.tls {
		over = "; over TLS (HTTP/1.1)"
	}
	fmt.Fprintf(w, "\nllm-sim: decode step %g ms, +%g ms before the first token; answers %d–%d tokens (staggered) or %d (uniform); "+
		"%s per client and level; k6: %d streams per VU; load average now %s%s\n",
		s.decodeMs, s.ttftMs, s.minTokens, s.maxTokens, s.maxTokens, s.duration, s.streamsPerVU, strings.Fields(string(load) + " ?")[0], over)
	fmt.Fprintln(w, "errors are client − server (llm-sim's trace), ms, p50 / p99 / max")
	for _, shape := range s.shapes {
		fmt.Fprintf(w, "\n%s answers\n\n", shape)
		fmt.Fprintln(w, "| streams | client | answers (joined) | answer tokens | opened a connection | TTFT error | read-side error | gap error | TTFT error: new conn p50 / reused conn p50, p99 | client CPU s | llm-sim CPU s | connections |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|")
		byLevel := map[int]map[int]map[string]result{} // streams → run → client
		for _, r := range results {
			if r.shape != shape {
				continue
			}
			if byLevel[r.streams] == nil {
				byLevel[r.streams] = map[int]map[string]result{}
			}
			if byLevel[r.streams][r.run] == nil {
				byLevel[r.streams][r.run] = map[string]result{}
			}
			byLevel[r.streams][r.run][r.client] = r
			e := r.e
			reused := distOf(e.ttftReused)
			fmt.Fprintf(w, "| %d | %s%s | %d (%d) | %d–%d | %d | %s | %s | %s | %.2f / %.2f, %.2f | %.1f | %.1f | %d |\n",
				r.streams, r.client, s.runLabel(r.run), e.calls, e.joined, e.minTokens, e.maxTokens, e.newConn, distOf(e.ttft), distOf(e.read), distOf(e.gap),
				distOf(e.ttftNewConn).p50, reused.p50, reused.p99, r.clientCPU, r.simCPU, r.connections)
		}
		fmt.Fprint(w, "\nratio to bare (goal ≤ 1.25): TTFT error p50, p99; gap error p99; TTFT error p99 on reused connections; the module's own lag and what client_bound says of it")
		if s.runs > 1 {
			fmt.Fprintf(w, "; each the median of %d runs (their range)", s.runs)
		}
		fmt.Fprintln(w)
		for _, n := range s.levels {
			for _, c := range s.clients {
				if c == "bare" {
					continue
				}
				if line := ratioLine(s, byLevel[n], c); line != "" {
					fmt.Fprintf(w, "  %5d streams, %s: %s\n", n, c, line)
				}
				if s.runs > 1 {
					runVerdicts(w, byLevel[n], c, s.runs)
				}
			}
		}
	}
}

// runVerdicts prints, for each run of a level, the two p99 ratios that say
// whether the module left the floor, and what client_bound said of that run:
// the rule is judged run by run, and the median line cannot show it.
func runVerdicts(w io.Writer, runs map[int]map[string]result, client string, n int) {
	for k := 1; k <= n; k++ {
		b, m := runs[k]["bare"], runs[k][client]
		if b.e == nil || m.e == nil {
			continue
		}
		fmt.Fprintf(w, "          run %d: p99 %.2f, reused p99 %.2f;%s;%s\n", k,
			distOf(m.e.ttft).p99/distOf(b.e.ttft).p99, distOf(m.e.ttftReused).p99/distOf(b.e.ttftReused).p99, lagVerdict(m.e),
			truth(m.e, b.e))
	}
}

// ratioLine is one client's ratios to the floor at one level: as they are for
// a single run, as medians and ranges for several.
func ratioLine(s settings, runs map[int]map[string]result, client string) string {
	var ratios [4][]float64
	var lags []*errors
	fires, due, answers := 0, 0, math.MaxInt
	for k := 1; k <= s.runs; k++ {
		b, m := runs[k]["bare"], runs[k][client]
		if b.e == nil || m.e == nil {
			continue
		}
		for i, r := range []float64{
			distOf(m.e.ttft).p50 / distOf(b.e.ttft).p50, distOf(m.e.ttft).p99 / distOf(b.e.ttft).p99,
			distOf(m.e.gap).p99 / distOf(b.e.gap).p99, distOf(m.e.ttftReused).p99 / distOf(b.e.ttftReused).p99,
		} {
			ratios[i] = append(ratios[i], r)
		}
		lags = append(lags, m.e)
		if clientBound(m.e) {
			fires++
		}
		if clientBoundDue(m.e) {
			due++
		}
		answers = min(answers, m.e.joined, b.e.joined)
	}
	if len(lags) == 0 {
		return ""
	}
	if len(lags) == 1 {
		return fmt.Sprintf("%.2f  %.2f  %.2f  %.2f%s%s", ratios[0][0], ratios[1][0], ratios[2][0], ratios[3][0],
			lagVerdict(lags[0]), fewAnswers(answers))
	}
	var b strings.Builder
	for i := range ratios {
		v := slices.Clone(ratios[i])
		slices.Sort(v)
		fmt.Fprintf(&b, "%.2f (%.2f–%.2f)  ", median(v), v[0], v[len(v)-1])
	}
	fmt.Fprintf(&b, " client_bound fires in %d of %d runs (due in %d)%s", fires, len(lags), due, fewAnswers(answers))
	return b.String()
}

// lagVerdict is the module's own view of its lateness at a level: its lag
// (result.clientLag, ms), the share of answers whose first token it read
// together with the next (result.ttftLate) and the median TTFT error of
// those, and whether the report's client_bound rule fires on them.
func lagVerdict(e *errors) string {
	if len(e.lag) == 0 && e.ttftJudged == 0 {
		return ""
	}
	p50, p95 := lagPercentiles(e.lag)
	verdict := "silent"
	if clientBound(e) {
		verdict = "client_bound fires"
	}
	late := ""
	if len(e.ttftLate) > 0 {
		late = fmt.Sprintf(" (their TTFT error p50 %.1f ms)", distOf(e.ttftLate).p50)
	}
	return fmt.Sprintf("   lag p50 %.1f / p95 %.1f ms, TTFT made late %.1f %%%s: %s%s", p50, p95, 100*lateShare(e), late, verdict, judgeCheck(e))
}

// truth is what the trace says of the module's lateness: the share of its
// answers whose TTFT error was half a decode step or more, the floor's beside
// it, and whether that share is one the client_bound rule must fire on (the
// report's LateTTFTsBound, on the truth instead of the module's judgement).
func truth(m, b *errors) string {
	due := "not due"
	if clientBoundDue(m) {
		due = "due"
	}
	return fmt.Sprintf(" the trace: TTFT ≥ %.0f ms over in %.1f %% of answers (the floor's %.1f %%): client_bound %s",
		halfStepMS, 100*overShare(m), 100*overShare(b), due)
}

// overShare is the share of a run's joined answers whose TTFT error was half
// a decode step or more.
func overShare(e *errors) float64 {
	if e.joined == 0 {
		return 0
	}
	return float64(e.over) / float64(e.joined)
}

// clientBoundDue is whether the truth calls for client_bound: as many
// answers over by half a decode step as the rule counts late calls on.
func clientBoundDue(e *errors) bool {
	return report.LateTTFTsBound(uint64(e.over), uint64(e.joined)) // #nosec G115 -- counts
}

// judgeCheck sets result.ttftLate beside the trace: the server's bursts (its
// first two tokens written together) and how many were taken for late reads;
// the answers judged on time that were read half a decode step late, or whose
// TTFT was over by that much; the answers whose request went out that late
// (result.sendWait); and what of the TTFT error the send wait does not
// explain.
func judgeCheck(e *errors) string {
	if e.ttftJudged == 0 {
		return ""
	}
	unsent := ""
	if len(e.unsent) > 0 {
		d := distOf(e.unsent)
		unsent = fmt.Sprintf("; TTFT error less the send wait p50 %.2f / p99 %.2f ms", d.p50, d.p99)
	}
	return fmt.Sprintf("; the server's bursts %d, judged late %d; judged on time, read ≥ %.0f ms late %d, "+
		"TTFT ≥ %.0f ms over %d; sent ≥ %.0f ms late %d%s",
		e.bursts, e.burstsLate, halfStepMS, e.missedLate, halfStepMS, e.missedTTFT, halfStepMS, e.sentLate, unsent)
}

// lagPercentiles are the P50 and P95 of a level's client lags (0 for none).
func lagPercentiles(lag []float64) (p50, p95 float64) {
	if len(lag) == 0 {
		return 0, 0
	}
	s := slices.Clone(lag)
	slices.Sort(s)
	return quantile(s, 0.5), quantile(s, 0.95)
}

// lateShare is the share of a run's judged answers whose first token was
// read late.
func lateShare(e *errors) float64 {
	if e.ttftJudged == 0 {
		return 0
	}
	return float64(e.ttftLateN) / float64(e.ttftJudged)
}

// clientBound is whether the report's client_bound rule fires on a run's
// lags and first reads (internal/report's ClientLagP50MS / ClientLagP95MS
// and LateTTFTsBound).
func clientBound(e *errors) bool {
	p50, p95 := lagPercentiles(e.lag)
	return p50 >= report.ClientLagP50MS || p95 >= report.ClientLagP95MS ||
		report.LateTTFTsBound(uint64(e.ttftLateN), uint64(e.ttftJudged)) // #nosec G115 -- counts, not negative
}

// fewAnswers warns when a level had too few answers for its p99 to be more
// than its largest value (1 stream for 15 s gives about five).
func fewAnswers(n int) string {
	if n >= 100 {
		return ""
	}
	return fmt.Sprintf(" (only %d answers: the TTFT p99 is their largest)", n)
}

// median of sorted values: the middle one, or the mean of the middle two.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
