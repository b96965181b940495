package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/quantile"
	"github.com/llmstream/xk6-llmstream/internal/queuesim"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// llm-sim as c slots of a fixed service time: c slots (max_num_seqs),
// answers of exactly n tokens, one token per decode step of a fixed length
// whatever the batch, a free prefill that rides in a step. A call holds its
// slot for n steps, and its first token comes at the end of the step it
// was admitted in: a call that finds the engine busy waits for the step
// under way (half a step on average), then one step.
func (c truthCheck) simArgs() []string {
	return []string{"--model", "sim-q=fast", "--set", fmt.Sprintf("max_num_seqs=%d", c.slots),
		"--set", fmt.Sprintf("decode_base_ms=%g", c.stepMS), "--set", "decode_per_seq_ms=0", "--set", "prefill_base_ms=0",
		"--set", "prefill_per_token_ms=0", "--set", "output_dist=exact", "--seed", "1"}
}

const truthPrecision = 0.1

// truthCheck is one version of the check: llm-sim's slots, answer length
// and step, the TTFT objective, the search's range and windows
// (capacity_truth.js's variables), and the plain runs' length and warm-up.
type truthCheck struct {
	slots         int
	tokens        int
	stepMS        float64
	slo           string  // the objective as the script gives it
	limit         float64 // its limit, s
	search        map[string]string
	plain, warmup string
}

// queue is the same server as a queue, for the simulation, as set up. The
// test simulates it as measured too: on a loaded machine llm-sim's steps
// run late (a 5 % longer step makes a 5 % longer call, and moves the
// boundary 5 %), so the queue simulated is c slots of n of the steps the
// calls saw (their TPOT p50 in the sustain window at the answer), the first
// token at the TTFT p50 of the first window (the lightest load).
func (c truthCheck) queue() queuesim.Queue {
	return queuesim.Queue{Slots: c.slots, Service: float64(c.tokens) * c.stepMS / 1000, FirstToken: 1.5 * c.stepMS / 1000}
}

// longTruth is make accuracy-capacity's check, BENCHMARKS.md's table: 4
// slots (20 req/s at most), TTFT p95<600ms, a user's short 8 s windows
// (CAPACITY_TRUTH_WINDOW sets another; "" for the default 20 s), the
// default minute of sustain, plain runs of 45 s. Near the boundary its
// queue relaxes over about 15 s (1 / (cμ(1 − √ρ)²) of an M/M/c queue: cμ
// = 20 req/s at ρ = 0.89), so a window decides only from tens of seconds
// of calls: Poisson's search and plain runs take four to nine minutes on
// two cores, bursty arrivals' search ten minutes or more (its windows need
// cv² = 4 times the calls).
func longTruth() truthCheck {
	c := truthCheck{slots: 4, tokens: 20, stepMS: 10, slo: "p95<600ms", limit: 0.6, search: map[string]string{},
		plain: "45s", warmup: "10s"}
	window, ok := os.LookupEnv("CAPACITY_TRUTH_WINDOW")
	if !ok {
		window = "8s"
	}
	if window != "" {
		c.search["WINDOW"] = window
	}
	return c
}

// quickTruth is make test's: the same 200 ms calls (10 tokens of 20 ms
// steps) on 16 slots (80 req/s at most) and TTFT p95<200ms, which puts
// Poisson's boundary at 90 % of the server's rate, as 600 ms does on 4
// slots at 89 %. Its queue relaxes four times faster (cμ = 80 req/s: about
// 6 s at ρ = 0.9), and a window holds four times the calls, so 5 s windows
// decide, 15 s of sustain hold a few of its relaxation times, and plain
// runs of 15 s (the first 5 s left out) bound their p95 from about 600
// calls. Steps of 20 ms rather than 10 halve the events a call costs both
// processes and the share of a step a busy machine's delay is. The range
// runs from half the server's rate to 1.5 times it.
func quickTruth() truthCheck {
	return truthCheck{slots: 16, tokens: 10, stepMS: 20, slo: "p95<200ms", limit: 0.2,
		search: map[string]string{"MIN": "40", "MAX": "120", "WINDOW": "5s", "SUSTAIN": "15s"}, plain: "15s", warmup: "5s"}
}

// truthArrivals are the arrival processes checked, by the script's name.
var truthArrivals = []struct {
	arrivals string
	p        queuesim.Process
}{{"constant", queuesim.Constant()}, {"poisson", queuesim.Poisson()}, {"bursty", queuesim.Bursty(2)}}

// TestCapacityAgainstQueueingTruth runs the capacity search against llm-sim
// under constant, Poisson and bursty (gamma, cv 2) arrivals, at once, and
// compares each answer with the boundary of the same queue simulated
// (10⁶ arrivals of a G/D/c queue, internal/queuesim), on longTruth's
// server. The answer is never past the truth by more than the precision,
// nor below it by more without saying why (a level above it could not
// decide, or its sustain window failed). Then plain runs of the same
// arrivals check it in steady state: at the answer the objective is not
// shown broken, and 30 % above an answer within the precision it is.
//
// Only make accuracy-capacity (LLMSTREAM_CAPACITY_TRUTH=1) runs it, all
// three one at a time: it takes about 30 minutes. It then runs the same
// checks on quickTruth's server under Poisson arrivals
// (TestPoissonCapacityAgainstQueueingTruth).
func TestCapacityAgainstQueueingTruth(t *testing.T) {
	t.Parallel()
	all := os.Getenv("LLMSTREAM_CAPACITY_TRUTH") != ""
	for _, a := range truthArrivals {
		t.Run(a.arrivals, func(t *testing.T) {
			if !all {
				t.Skip("minutes long: make accuracy-capacity runs it (LLMSTREAM_CAPACITY_TRUTH=1)")
			}
			t.Parallel()
			checkTruth(t, longTruth(), a.arrivals, a.p)
		})
	}
}

// TestPoissonCapacityAgainstQueueingTruth is TestCapacityAgainstQueueingTruth's
// checks under Poisson arrivals (the search's default) on quickTruth's
// server: about two and a half minutes. make test runs it as its last
// stage, alone on the machine (make accuracy-capacity-short), and make
// accuracy-capacity after the long three. Not beside the other e2e tests:
// beside them a stall of the machine (several k6 processes starting at
// once) held every call of a window at 40 req/s, half the server's rate,
// for 400 ms, and the search rightly failed that level for what it
// measured; at the boundary a busy machine's late llm-sim steps are load.
// Constant and bursty arrivals stay on the long server: under constant
// arrivals the truth is the server's rate itself, where a busy machine's
// late steps alone build a queue past a 200 ms objective (make test's
// TestCapacitySearch holds constant arrivals' answer to the same queue
// simulated, constantTruth, on a server with room for those steps). Under
// bursty arrivals a quick server (32 slots, p95<250ms) searched within
// the precision, but a 15 s plain run's p95 at the answer rested on a few
// bursts and crossed the limit: steady state under cv 2 needs the long
// server's plain runs, minutes more. make unit holds the
// decision rule to the same queues' truth on a fake clock for all three.
func TestPoissonCapacityAgainstQueueingTruth(t *testing.T) {
	if os.Getenv("LLMSTREAM_CAPACITY_TRUTH") == "" {
		t.Skip("minutes long, alone: make test's last stage runs it (make accuracy-capacity-short, LLMSTREAM_CAPACITY_TRUTH=1)")
	}
	checkTruth(t, quickTruth(), "poisson", queuesim.Poisson())
}

// checkTruth runs c's search under arrivals, holds its answer to the
// queue's truth, then runs the plain runs at the answer and 30 % above it.
func checkTruth(t *testing.T, c truthCheck, arrivals string, p queuesim.Process) {
	t.Helper()
	env := map[string]string{"ARRIVALS": arrivals, "TTFT": c.slo, "TOKENS": fmt.Sprint(c.tokens)}
	for k, v := range c.search {
		env[k] = v
	}
	r := runCapacity(t, filepath.Join("e2e", "testdata", "capacity_truth.js"), startSim(t, c.simArgs()...), env)[0]
	answer, truth, step := checkAgainstTruth(t, c, r, p)
	within := answer >= truth*(1-truthPrecision)
	atAnswer := steadyRun(t, c, arrivals, answer, step)
	above, _ := plainRun(t, c, arrivals, 1.3*answer)
	lo, hi := p95Lower(t, atAnswer), p95Lower(t, above)
	t.Logf("%s: TTFT p95 from due %.0f ms (at least %.0f) at the answer %.3g req/s, %.0f ms (at least %.0f) at %.3g",
		arrivals, atAnswer.P95, lo, answer, above.P95, hi, 1.3*answer)
	require.LessOrEqual(t, lo, 1000*c.limit, "at the answer the objective is not shown broken in steady state")
	if within {
		require.Greater(t, hi, 1000*c.limit, "30 %% above the answer the objective is shown broken")
	} else {
		require.Greater(t, above.P95, lo, "30 %% above a low answer TTFT is longer at least")
	}
}

// checkAgainstTruth holds the search's answer to the queue's truth and
// returns both, and llm-sim's decode step as the search's calls saw it (ms).
// The truth is the boundary of the server the answer was sustained on
// (measuredQueues); an answer below it by more than the precision may be
// explained by the slower server a level above it failed on.
func checkAgainstTruth(t *testing.T, tc truthCheck, r capacityRecord, p queuesim.Process) (answer, truth, step float64) {
	t.Helper()
	raw, err := os.ReadFile(r.path) //nolint:gosec // the test's own temp file
	require.NoError(t, err)
	var rec struct {
		Capacity runrecord.Capacity `json:"capacity"`
	}
	require.NoError(t, json.Unmarshal(raw, &rec))
	c := rec.Capacity
	var dur float64
	if n := len(c.Windows); n > 0 {
		dur = c.Windows[n-1].EndS
	}
	nominal, err := tc.queue().Boundary(p, 0.95, tc.limit, 1_000_000, 1, 0.002)
	require.NoError(t, err)
	held, slower, step := measuredQueues(t, tc, &c)
	truth, err = held.Boundary(p, 0.95, tc.limit, 1_000_000, 1, 0.002)
	require.NoError(t, err)
	low := truth
	if slower.Service > held.Service {
		low, err = slower.Boundary(p, 0.95, tc.limit, 1_000_000, 1, 0.002)
		require.NoError(t, err)
	}
	t.Logf("%s: truth %.3g req/s (%.0f ms calls, first token at %.0f ms, as measured at the answer; %.3g as set up; %.3g for the %.0f ms calls of the first fail); %s, %d windows in %.0f s",
		c.Arrivals, truth, 1000*held.Service, 1000*held.FirstToken, nominal, low, 1000*slower.Service, answerLine(&c), len(c.Windows), dur)
	logWindows(t, &c)
	require.Equal(t, "found", c.Outcome, "levels %v", r.levels())
	require.NotNil(t, c.Capacity)
	require.NotNil(t, c.SustainedS, "the answer was sustained")
	require.InDelta(t, 0.95, c.Confidence, 0)
	a := *c.Capacity
	require.LessOrEqual(t, a, truth*(1+truthPrecision), "never confidently past the truth")
	// Below the truth by more than the precision, the answer must say why:
	// a level above it could not decide, or a sustain window above it failed
	// outright (llm-sim's steps run late on a loaded machine, so near the
	// boundary its calls vary more than the G/D/c queue's, whose truth is
	// then too high: the server itself did not hold that level for its
	// sustain window), or a level above it failed on a server slow enough
	// that its own truth is within the precision.
	if a < low*(1-truthPrecision) {
		require.True(t, len(c.UndecidedAbove) > 0 || sustainFailedAbove(&c, a),
			"an answer this far below the truth says which level could not decide, or failed its sustain window")
	}
	return a, truth, step
}

// logWindows logs the search's windows, one line each.
func logWindows(t *testing.T, c *runrecord.Capacity) {
	t.Helper()
	for _, w := range c.Windows {
		carried := ""
		if w.Carried != nil {
			carried = fmt.Sprintf(" (carried %.3g)", *w.Carried)
		}
		t.Logf("  %2d %-7s %6.3g%s %s: %s; %d calls, %d censored, %.0f–%.0f s", w.Index, w.Phase, w.Level, carried,
			w.Verdict, w.Reason, w.Calls, w.Censored, w.StartS, w.EndS)
	}
}

// sustainFailedAbove says whether a sustain window at a level above the
// answer failed with its calls deciding it.
func sustainFailedAbove(c *runrecord.Capacity, answer float64) bool {
	for _, w := range c.Windows {
		if w.Phase == "sustain" && w.Level > answer && w.Verdict == "fail" && !w.Undecided {
			return true
		}
	}
	return false
}

// measuredQueues are tc's queue with the call and first-token times the
// search's calls saw: held, the server the answer was sustained on (the
// step from the TPOT p50 of the sustain window at the answer), and slower,
// the slower of it and the server at the first fail (its latest window
// there). Both take the first token from the TTFT p50 of the first window.
// On a busy machine llm-sim's steps run later under the heavier load, so
// the server that failed a level above the answer may have been a few
// percent slower than the one that held the answer: the answer's claim is
// about held, and a first fail on slower explains a low answer. It also
// returns the step at the answer, ms (0: no sustain window passed).
func measuredQueues(t *testing.T, tc truthCheck, c *runrecord.Capacity) (held, slower queuesim.Queue, step float64) {
	t.Helper()
	held = tc.queue()
	require.NotEmpty(t, c.Windows)
	if p := c.Windows[0].TTFT.P50; p != nil {
		held.FirstToken = *p / 1000
	}
	var sustained, failed *float64
	for _, w := range c.Windows {
		switch {
		case w.Phase == "sustain" && w.Verdict == "pass":
			sustained = w.TPOT.P50
		case c.FirstFail != nil && w.Level == *c.FirstFail && w.EarlyStopS == nil:
			failed = w.TPOT.P50
		}
	}
	if sustained != nil {
		step = *sustained
		held.Service = float64(tc.tokens) * step / 1000
	}
	slower = held
	if failed != nil {
		slower.Service = max(held.Service, float64(tc.tokens)**failed/1000)
	}
	return held, slower, step
}

func answerLine(c *runrecord.Capacity) string {
	if c.Capacity == nil {
		return c.Outcome
	}
	return fmt.Sprintf("%s %.3g req/s%s", c.Outcome, *c.Capacity, c.Assurance())
}

// plainRuns holds the plain runs to one at a time: llm-sim's steps run late
// on a busy machine, and near its capacity a few percent slower a step
// moves the queue past the objective, so a plain run shares the machine
// with as few k6 runs as the searches leave.
var plainRuns sync.Mutex

// stepSlack is how much slower than the search saw llm-sim's step may run
// in the plain run at the answer for it to be the same server: at the
// boundary 3 % more service time is a few percent more load. The plain
// run's mean step is held to the search's median one: a busy machine
// delays some steps by much (its median barely moves), and under constant
// arrivals at 95 % of the capacity those delays alone build a queue.
const stepSlack = 0.03

// steadyRun is the plain run at the answer (its TTFT-from-due figures), on
// the server the search measured: a run whose llm-sim stepped more than
// stepSlack slower than the search's (the machine was busier) measured
// another server, and is run again, up to three times; the last one
// counts, whatever its step, and says so.
func steadyRun(t *testing.T, c truthCheck, arrivals string, rate, step float64) runrecord.MetricRecord {
	t.Helper()
	for attempt := 1; ; attempt++ {
		m, got := plainRun(t, c, arrivals, rate)
		if got <= step*(1+stepSlack) || attempt == 3 {
			t.Logf("%s: the plain run at the answer stepped %.2f ms on average (the search %.2f ms), attempt %d", arrivals, got, step, attempt)
			return m
		}
		t.Logf("%s: the plain run at the answer stepped %.2f ms on average, %.0f %% slower than the search (%.2f ms): another server, so again",
			arrivals, got, 100*(got/step-1), step)
	}
}

// plainRun runs capacity_plain.js at rate for c's plain run (its warm-up
// left out) on a server of its own and returns its TTFT-from-due figures
// and llm-sim's decode step as its calls saw it (their mean TPOT, ms).
func plainRun(t *testing.T, c truthCheck, arrivals string, rate float64) (runrecord.MetricRecord, float64) {
	t.Helper()
	plainRuns.Lock()
	defer plainRuns.Unlock()
	dir := t.TempDir()
	env := map[string]string{"LLM_BASE_URL": startSim(t, c.simArgs()...) + "/v1", "LLM_REPORT_DIR": dir,
		"ARRIVALS": arrivals, "RATE": fmt.Sprint(rate), "DURATION": c.plain, "WARMUP": c.warmup, "TOKENS": fmt.Sprint(c.tokens)}
	code, out := runK6(t, filepath.Join("e2e", "testdata", "capacity_plain.js"), env)
	if code != 0 {
		t.Errorf("plain run at %.3g: k6 exited with %d\n%s", rate, code, out)
		return runrecord.MetricRecord{}, 0
	}
	raw, err := os.ReadFile(filepath.Join(dir, "capacity_plain.json")) //nolint:gosec // the test's own temp file
	require.NoError(t, err)
	var rec runrecord.Record
	require.NoError(t, json.Unmarshal(raw, &rec))
	all := rec.Categories["all"]
	require.NotNil(t, all)
	m := all.Metrics["ttft_from_due"]
	require.NotNil(t, m, "the plain run's calls carry their due time")
	tpot := all.Metrics["tpot"]
	require.NotNil(t, tpot)
	return *m, tpot.Mean
}

// p95Lower is the 95 % lower bound of the run's p95 (order statistics, the
// sketch's relative error taken off): past the limit, the objective is
// shown broken.
func p95Lower(t *testing.T, m runrecord.MetricRecord) float64 {
	t.Helper()
	require.NotNil(t, m.Sketch)
	n := int(m.Sketch.Count())
	lo := quantile.Lower(n, 0.95, 0.95).Lo
	require.Positive(t, lo, "%d calls", n)
	return m.Sketch.Quantile(quantile.RankQuantile(lo, n)) * (1 - m.Sketch.Alpha)
}
