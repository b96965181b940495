package capacity

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/queuesim"
)

// capacityTable asks TestCapacityTruthTable for BENCHMARKS.md's capacity
// table (make bench-capacity). Without it the test is skipped: it is a
// measurement, not a check (TestSearchAgainstTheQueuesTruth is the check).
var capacityTable = flag.Bool("capacity.table", false, "print the capacity-vs-queueing-truth table (BENCHMARKS.md)")

// tableSeeds is how many searches each row summarises (arrival seeds 1…n).
const tableSeeds = 10

// TestCapacityTruthTable runs the search on the fake clock against two
// queues (G/D/4), for constant, Poisson and bursty (gamma, cv 2) arrivals at
// the default 20 s window and a short 8 s one, tableSeeds arrival seeds
// each, and prints a Markdown table: the queue's simulated boundary (the
// truth), the answers, the worst answer over the truth, how many searches
// said a level above their answer could not decide, and the search's length
// (simulated seconds). The simulated calls have no network or scheduling
// noise: the table measures the decision rule, the e2e truth test
// (make accuracy-capacity) the whole tool against llm-sim.
func TestCapacityTruthTable(t *testing.T) {
	if !*capacityTable {
		t.Skip("a measurement: go test -run TestCapacityTruthTable -capacity.table ./internal/capacity/ (make bench-capacity)")
	}
	type server struct {
		name         string
		q            queuesim.Queue
		tokens       int64
		slo          string
		limit        float64 // s
		min, max     float64
		precision    float64
		prefill, svc time.Duration
	}
	servers := []server{
		{name: "4 × 200 ms, p95<600ms", q: queuesim.Queue{Slots: 4, Service: 0.2, FirstToken: 0.015}, tokens: 20,
			slo: "p95<600ms", limit: 0.6, min: 4, max: 64, precision: 0.1, prefill: 15 * time.Millisecond, svc: 200 * time.Millisecond},
		{name: "4 × 490 ms, p95<400ms", q: queuesim.Queue{Slots: 4, Service: 0.49, FirstToken: 0.1},
			tokens: 40, slo: "p95<400ms", limit: 0.4, min: 1, max: 32, precision: 0.1, prefill: 100 * time.Millisecond,
			svc: 490 * time.Millisecond},
	}
	procs := []struct {
		name     string
		arrivals string
		p        queuesim.Process
	}{{"constant", ArrivalsConstant, queuesim.Constant()}, {"Poisson", ArrivalsPoisson, queuesim.Poisson()},
		{"bursty, cv 2", ArrivalsBursty, queuesim.Bursty(2)}}
	var b strings.Builder
	b.WriteString("| slots × call, TTFT | arrivals | rate range | window | truth (req/s) | answer: median [min–max] | worst answer ÷ truth " +
		"| said undecided above | search length: median [max] |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, sv := range servers {
		for _, pr := range procs {
			truth, err := sv.q.Boundary(pr.p, 0.95, sv.limit, 400_000, 1, 0.005)
			require.NoError(t, err)
			// A truth under the range's min (bursty arrivals on the slow
			// server) is searched from half of it, so the answer can be found.
			lowest := sv.min
			if truth < 1.2*sv.min {
				lowest = sv.min / 2
			}
			for _, window := range []time.Duration{DefaultWindow, 8 * time.Second} {
				var answers, lengths []float64
				undecided := 0
				for seed := uint64(1); seed <= tableSeeds; seed++ {
					sim := &queueSim{slots: sv.q.Slots, service: sv.svc, prefill: sv.prefill, tokens: sv.tokens, gaps: pr.p.Gaps(seed)}
					s, err := New(Config{Model: ModelRate, Min: lowest, Max: sv.max, Window: window, Precision: sv.precision,
						Arrivals: pr.arrivals, CV: pr.p.CV, Objectives: objectives(t, map[string]string{"ttft": sv.slo})})
					require.NoError(t, err)
					sim.run(t, s, 6*time.Hour)
					r := s.Result()
					lengths = append(lengths, r.Windows[len(r.Windows)-1].EndS)
					if r.Capacity == nil { // below min, or no level held
						continue
					}
					answers = append(answers, *r.Capacity)
					if len(r.UndecidedAbove) > 0 {
						undecided++
					}
				}
				slices.Sort(lengths)
				fmt.Fprintf(&b, "| %s | %s | %g–%g | %v | %.3g | %s | %d of %d | %.0f s [%.0f s] |\n", sv.name, pr.name, lowest, sv.max, window, truth,
					answerCells(answers, truth), undecided, tableSeeds, median(lengths), lengths[len(lengths)-1])
			}
		}
	}
	t.Log("\n" + b.String())
}

// answerCells is the answers' median and range, and the worst over the
// truth; searches that gave no answer (the first level, min, did not hold)
// are counted there.
func answerCells(answers []float64, truth float64) string {
	none := ""
	if n := tableSeeds - len(answers); n > 0 {
		none = fmt.Sprintf("; %d below min", n)
	}
	if len(answers) == 0 {
		return "none" + none + " | –"
	}
	slices.Sort(answers)
	return fmt.Sprintf("%.3g [%.3g–%.3g]%s | %.2f", median(answers), answers[0], answers[len(answers)-1], none,
		answers[len(answers)-1]/truth)
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
