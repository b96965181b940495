package e2e

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/queuesim"
)

// llm-sim as examples/capacity.js sets it up (its `// llm-sim:` line): 8
// slots (max_num_seqs), answers of exactly 20 tokens (output_dist exact,
// max_tokens 20), one token per 20 ms decode step whatever the batch
// (decode_per_seq_ms 0), and a free prefill that rides in a decode step. A
// call holds its slot for 20 steps:
//
//	service = tokens × decode_base_ms = 20 × 20 ms = 0.4 s
//	open:   capacity = slots / service = 8 / 0.4 s = 20 req/s
//	closed: capacity = slots = 8 calls in flight (a ninth waits for a slot,
//	        a whole service time, far past the TTFT objective)
const (
	simSlots      = 8
	simTokens     = 20
	simDecodeSec  = 0.020
	simService    = simTokens * simDecodeSec
	capacityRate  = simSlots / simService
	capacityConc  = simSlots
	capacityError = 0.10 // the answer must be within 10 % of the computed capacity
	maxWindows    = 16   // the search's budget, its sustain windows included
)

var capacityScript = filepath.Join("examples", "capacity.js")

type capacityRecord struct {
	path     string // the file it was read from
	Capacity struct {
		Model     string   `json:"model"`
		Outcome   string   `json:"outcome"`
		Capacity  *float64 `json:"capacity"`
		FirstFail *float64 `json:"first_fail"`
		Binding   string   `json:"binding_objective"`
		Segment   string   `json:"segment"`
		Instances []struct {
			Segment  string    `json:"segment"`
			Capacity *float64  `json:"capacity"`
			Levels   []float64 `json:"levels"`
		} `json:"instances"`
		Disagreement string `json:"disagreement"`
		Trace        *struct {
			Name     string   `json:"name"`
			MeanRate float64  `json:"mean_rate"`
			Scale    *float64 `json:"scale"`
		} `json:"trace"`
		Windows []struct {
			Level      float64  `json:"level"`
			Verdict    string   `json:"verdict"`
			Reason     string   `json:"reason"`
			EarlyStopS *float64 `json:"early_stop_s"`
			StartS     float64  `json:"start_s"`
			EndS       float64  `json:"end_s"`
			Calls      int      `json:"calls"`
			Energy     *struct {
				AvgPowerW       *float64 `json:"avg_power_w"`
				JPerOutputToken *float64 `json:"j_per_output_token"`
			} `json:"energy"`
		} `json:"windows"`
	} `json:"capacity"`
}

func (r capacityRecord) levels() []float64 {
	var out []float64
	for _, w := range r.Capacity.Windows {
		out = append(out, w.Level)
	}
	return out
}

// runCapacity runs script (examples/capacity.js and the like, whose record is
// named after it) with env, on the execution segments given (none: alone),
// all at once, and returns each instance's record.
func runCapacity(t *testing.T, script, url string, env map[string]string, segments ...string) []capacityRecord {
	t.Helper()
	if len(segments) == 0 {
		segments = []string{""}
	}
	recs := make([]capacityRecord, len(segments))
	var wg sync.WaitGroup
	for i, seg := range segments {
		wg.Go(func() {
			dir := t.TempDir()
			e := map[string]string{"LLM_BASE_URL": url + "/v1", "LLM_REPORT_DIR": dir}
			for k, v := range env {
				e[k] = v
			}
			var extra []string
			if seg != "" {
				extra = []string{"--execution-segment", seg, "--execution-segment-sequence", "0,1/2,1"}
			}
			code, out := runK6(t, script, e, extra...)
			if code != 0 {
				t.Errorf("segment %q: k6 exited with %d\n%s", seg, code, out)
				return
			}
			name := strings.TrimSuffix(filepath.Base(script), ".js") + ".json"
			raw, err := os.ReadFile(filepath.Join(dir, name)) //nolint:gosec // the test's own temp file
			if err != nil {
				t.Errorf("segment %q: no run record: %v", seg, err)
				return
			}
			recs[i].path = filepath.Join(dir, name)
			if err := json.Unmarshal(raw, &recs[i]); err != nil {
				t.Errorf("segment %q: run record: %v", seg, err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return recs
}

// constantTruth is the boundary of llm-sim's queue under constant arrivals
// (simSlots slots of simService, the first token a step and a half in,
// TTFT p95<250ms as examples/capacity.js sets it), simulated (10⁵
// arrivals, internal/queuesim): the same queue the Poisson and bursty
// truth checks simulate, here the service rate itself, as the capacity
// computed from the settings says.
func constantTruth(t *testing.T) float64 {
	t.Helper()
	q := queuesim.Queue{Slots: simSlots, Service: simService, FirstToken: 1.5 * simDecodeSec}
	truth, err := q.Boundary(queuesim.Constant(), 0.95, 0.25, 100_000, 1, 0.002)
	require.NoError(t, err)
	require.InDelta(t, capacityRate, truth, 0.01*capacityRate, "constant arrivals: no queue below the service rate")
	return truth
}

// checkCapacity holds an answer to the capacity computed from llm-sim's
// settings (or the same queue's simulated boundary).
func checkCapacity(t *testing.T, r capacityRecord, want float64) {
	t.Helper()
	c := r.Capacity
	if n := len(c.Windows); n > 0 {
		t.Logf("%s %s: %s after %d windows in %.0f s, levels %v", c.Segment, c.Model, c.Outcome, n, c.Windows[n-1].EndS, r.levels())
	}
	require.Equal(t, "found", c.Outcome, "levels %v", r.levels())
	require.NotNil(t, c.Capacity)
	require.InDelta(t, want, *c.Capacity, capacityError*want, "levels %v", r.levels())
	require.LessOrEqual(t, len(c.Windows), maxWindows)
	require.NotEmpty(t, c.Binding)
}

// The TestCapacitySearch tests find llm-sim's capacity with the open model (constant
// arrivals, so the boundary is the service rate itself: the queue's
// simulated truth, constantTruth) and the closed one,
// each in one ordinary k6 run of 3 s windows (6 s for the open model's early
// stops), with the open model on two
// k6 instances at once (execution segments 0:1/2 and 1/2:1) against one
// llm-sim: each runs half of every level's arrivals and decides from its own
// half, and both reach the answer one instance reaches, and with a trace's
// arrivals. Windows far past the capacity end early as over-saturated, and
// their time is in the record; one ends on the server's waiting count. They
// run at once: each scenario ends as soon as its answer is known. llm-sim's
// calls here take a fixed time, so a short sustain window (a few windows,
// not the default minute that random arrivals need) confirms the answer.
// Each search starts at half the capacity or more (min): a window passes
// only from the 59 calls a p95 needs, so a level far under the capacity
// costs a long window and decides nothing these checks look at. Each is a
// test of its own, not a subtest: go test gives the parallel tests their
// slots about in the order they ask, and the subtests of a parallel test ask
// only once it has run, behind every other test of the package, so the
// longest searches began last and ended the stage.

// capacityArgs is llm-sim as examples/capacity.js sets it up.
func capacityArgs(t *testing.T) []string {
	t.Helper()
	return simArgs(t, filepath.Join(repoRoot(t), "examples", "capacity.js"))
}

// TestCapacitySearchOpen: the open model, constant arrivals, one instance.
func TestCapacitySearchOpen(t *testing.T) {
	t.Parallel()
	url := startSim(t, capacityArgs(t)...)
	// 6 s windows: a window ends early only after its queue showed for
	// 2 s in a row, past twice the TTFT limit. From 16 req/s (80 % of
	// the capacity): a level far under it only costs time, as a window
	// passes from 59 calls (15 s at 4 req/s), and the bracket still
	// doubles once, to 32, an early stop.
	r := runCapacity(t, capacityScript, url, map[string]string{"ARRIVALS": "constant", "MIN": "16", "MIN_CAPACITY": "18",
		"WINDOW": "6s", "SUSTAIN": "12s"})[0]
	checkCapacity(t, r, constantTruth(t))
	checkEarlyStops(t, r, 6)
}

// TestCapacitySearchClosed: the closed model.
func TestCapacitySearchClosed(t *testing.T) {
	t.Parallel()
	url := startSim(t, capacityArgs(t)...)
	// From 4 in flight: 59 calls take 24 s at 1 (2.5 calls/s), 6 s at 4.
	r := runCapacity(t, capacityScript, url, map[string]string{"MODEL": "concurrency", "TTFT": "p95<150ms", "MIN": "4",
		"MIN_CAPACITY": "7", "SUSTAIN": "9s"})[0]
	checkCapacity(t, r, capacityConc)
}

// TestCapacitySearchSegments: the open model on two instances at once.
func TestCapacitySearchSegments(t *testing.T) {
	t.Parallel()
	url := startSim(t, capacityArgs(t)...)
	// Each instance sees half the calls: a longer window and a higher min
	// keep enough of them in every window.
	env := map[string]string{"ARRIVALS": "constant", "MIN_CAPACITY": "18", "WINDOW": "4s", "MIN": "12", "SUSTAIN": "12s"}
	recs := runCapacity(t, capacityScript, url, env, "0:1/2", "1/2:1")
	truth := constantTruth(t)
	for _, r := range recs {
		checkCapacity(t, r, truth)
	}
	require.Equal(t, "0:1/2", recs[0].Capacity.Segment)
	require.Equal(t, "1/2:1", recs[1].Capacity.Segment)
	require.InDelta(t, *recs[0].Capacity.Capacity, *recs[1].Capacity.Capacity, capacityError*capacityRate,
		"levels %v and %v", recs[0].levels(), recs[1].levels())
	checkMergedCapacity(t, recs)
}

// TestCapacitySearchTrace: a trace's arrivals.
func TestCapacitySearchTrace(t *testing.T) {
	t.Parallel()
	url := startSim(t, capacityArgs(t)...)
	env := map[string]string{"TRACE": filepath.Join(repoRoot(t), "e2e", "testdata", "capacity-trace.jsonl"), "MIN": "16",
		"MIN_CAPACITY": "18", "SUSTAIN": "9s"}
	r := runCapacity(t, filepath.Join("examples", "capacity-trace.js"), url, env)[0]
	checkTraceCapacity(t, r)
}

// TestCapacitySearchWaiting: a window ended on the server's waiting count.
func TestCapacitySearchWaiting(t *testing.T) {
	t.Parallel()
	url := startSim(t, "--model", "sim-long=fast", "--set", "max_num_seqs=32", "--set", "decode_base_ms=200",
		"--set", "decode_per_seq_ms=0", "--set", "prefill_base_ms=0", "--set", "prefill_per_token_ms=0",
		"--set", "power_idle_w=60", "--set", "power_per_request_w=10", "--set", "gpus=2", "--seed", "1")
	r := runCapacity(t, filepath.Join("e2e", "testdata", "capacity_waiting.js"), url, map[string]string{"MIN": "18.4"})[0]
	checkWaitingEndsAWindow(t, r)
	checkSaturatedWindowEnergy(t, r)
}

// The trace (e2e/testdata/capacity-trace.jsonl) is recorded at 5 req/s: a
// row every 0.2 s, answers alternating 10 and 30 tokens (the prefill is free,
// so a call holds its slot 0.2 or 0.6 s, 0.4 s on average as in the other
// searches). At 20 req/s the 8 slots hold the two short calls of the last
// 0.2 s and the six long ones of the last 0.6 s: full, and nobody waits;
// past it calls queue. So the capacity is 20 req/s, the trace at 4× its
// speed. A search that sent other lengths than the rows' (30 tokens each:
// 13 req/s) or took the level for the multiplier would miss it.
const traceRecordedRate = 5.0

func checkTraceCapacity(t *testing.T, r capacityRecord) {
	t.Helper()
	checkCapacity(t, r, capacityRate)
	tr := r.Capacity.Trace
	require.NotNil(t, tr, "the record names the trace")
	require.Contains(t, tr.Name, "capacity-trace.jsonl")
	require.InDelta(t, traceRecordedRate, tr.MeanRate, 1e-9)
	require.NotNil(t, tr.Scale)
	require.InDelta(t, *r.Capacity.Capacity/traceRecordedRate, *tr.Scale, 1e-9)
	require.InDelta(t, capacityRate/traceRecordedRate, *tr.Scale, capacityError*capacityRate/traceRecordedRate)
	t.Logf("the trace's capacity: %.3g req/s, %.3g× its recorded speed, in %d windows (levels %v)",
		*r.Capacity.Capacity, *tr.Scale, len(r.Capacity.Windows), r.levels())
}

// checkWaitingEndsAWindow: llm-sim with 32 slots and 10-token answers of
// one 200 ms step each (2 s a call: 16 req/s), searched from 18.4 req/s,
// 15 % past it. The queue grows by 2.4 calls a second: TTFT climbs and the
// server's waiting count with it, while the client's calls in flight (32
// running plus the queue) rise slowly against their own level, by half only
// near the window's end. The first window ends early on the waiting count,
// and the capacity is below min.
func checkWaitingEndsAWindow(t *testing.T, r capacityRecord) {
	t.Helper()
	c := r.Capacity
	require.Equal(t, "below_min", c.Outcome, "levels %v", r.levels())
	require.NotEmpty(t, c.Windows)
	w := c.Windows[0]
	// The calls in flight may rise enough too by the time the window stops
	// (a busy machine's late scrapes): the reason names every sign it saw.
	require.Contains(t, w.Reason, "over-saturated: TTFT")
	require.Contains(t, w.Reason, "the server's waiting count", "the waiting count showed the queue")
	require.NotNil(t, w.EarlyStopS)
	require.Less(t, *w.EarlyStopS, 10.0, "ended inside its 10 s window")
	t.Logf("the first window ended %.1f s in: %s", *w.EarlyStopS, w.Reason)
}

// checkSaturatedWindowEnergy: past its capacity, llm-sim's 32 slots are all
// running once the first 1.7 s have filled them, so its power model draws
// 2 GPUs × 60 W + 32 × 10 W = 440 W over the window's measured span, and
// the 32 slots finish 16 calls of 10 tokens a second: 440 / 160 J per
// output token. The DCGM exporter's energy in the capacity window, over the
// engine's tokens in the same window, must give both within 5 %.
func checkSaturatedWindowEnergy(t *testing.T, r capacityRecord) {
	t.Helper()
	w := r.Capacity.Windows[0]
	require.NotNil(t, w.Energy, "the capacity window has the GPUs' energy")
	require.NotNil(t, w.Energy.AvgPowerW)
	require.NotNil(t, w.Energy.JPerOutputToken)
	t.Logf("the first window: %.1f W, %.3f J per output token", *w.Energy.AvgPowerW, *w.Energy.JPerOutputToken)
	require.InEpsilon(t, 440.0, *w.Energy.AvgPowerW, 0.05)
	require.InEpsilon(t, 440.0/160, *w.Energy.JPerOutputToken, 0.05)
}

// checkMergedCapacity merges the instances' records with `llmstream merge`:
// one answer, each instance's levels, and the windows they ran alike as
// windows of the whole test (their calls summed).
func checkMergedCapacity(t *testing.T, recs []capacityRecord) {
	t.Helper()
	merged := filepath.Join(t.TempDir(), "merged.json")
	out, err := exec.Command(llmstreamBin(t), "merge", "-o", merged, recs[0].path, recs[1].path).CombinedOutput() //nolint:gosec // our binary, our files
	require.NoError(t, err, string(out))
	raw, err := os.ReadFile(merged) //nolint:gosec // the test's own temp file
	require.NoError(t, err)
	var m capacityRecord
	require.NoError(t, json.Unmarshal(raw, &m))
	c := m.Capacity
	require.Empty(t, c.Segment)
	require.Len(t, c.Instances, 2)
	for i, in := range c.Instances {
		require.Equal(t, recs[i].Capacity.Segment, in.Segment)
		require.Equal(t, recs[i].levels(), in.Levels)
	}
	require.NotNil(t, c.Capacity)
	require.Equal(t, math.Min(*recs[0].Capacity.Capacity, *recs[1].Capacity.Capacity), *c.Capacity)
	if c.Disagreement == "" {
		require.Equal(t, recs[0].levels(), m.levels())
		require.Equal(t, recs[0].Capacity.Outcome, c.Outcome)
	} else {
		require.Contains(t, c.Disagreement, "parted at window")
		require.Less(t, len(c.Windows), max(len(recs[0].Capacity.Windows), len(recs[1].Capacity.Windows))+1)
	}
	for i, w := range c.Windows {
		require.Equal(t, recs[0].Capacity.Windows[i].Calls+recs[1].Capacity.Windows[i].Calls, w.Calls, "window %d", i+1)
	}
}

// checkEarlyStops holds that some window of an open-model search ended early
// as over-saturated, and only windows past the capacity did.
func checkEarlyStops(t *testing.T, r capacityRecord, windowS float64) {
	t.Helper()
	early := 0
	for _, w := range r.Capacity.Windows {
		if w.EarlyStopS != nil {
			early++
			require.Less(t, *w.EarlyStopS, windowS*4, "an early stop is inside its window, lengthened at most to four")
			require.InDelta(t, w.EndS-w.StartS, *w.EarlyStopS, 0.01)
			require.Contains(t, w.Reason, "over-saturated")
			require.Greater(t, w.Level, capacityRate, "only a window past the capacity is over-saturated")
		}
	}
	require.Positive(t, early, "levels %v", r.levels())
}
