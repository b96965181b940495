package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// scheduleRecord is what these tests read from a run record.
type scheduleRecord struct {
	Categories map[string]struct {
		Requests uint64            `json:"requests"`
		Failures uint64            `json:"failures"`
		Errors   map[string]uint64 `json:"errors"`
		Metrics  map[string]struct {
			Count uint64  `json:"count"`
			P50   float64 `json:"p50"`
			P99   float64 `json:"p99"`
		} `json:"metrics"`
	} `json:"categories"`
	Findings []struct {
		ID       string   `json:"id"`
		Evidence []string `json:"evidence"`
	} `json:"findings"`
	Dispatch *struct {
		Schedules []struct {
			Claimed, Late, Dropped uint64
		} `json:"schedules"`
		K6Dropped   *float64 `json:"k6_dropped_iterations"`
		K6Shortfall *struct {
			VUsMax    float64 `json:"vus_max"`
			NeededVUs float64 `json:"needed_vus"`
		} `json:"k6_vu_shortfall"`
	} `json:"dispatch"`
}

func readScheduleRecord(t *testing.T, path string) scheduleRecord {
	t.Helper()
	raw, err := os.ReadFile(path) //nolint:gosec // the test's own temp file
	require.NoError(t, err)
	var r scheduleRecord
	require.NoError(t, json.Unmarshal(raw, &r))
	return r
}

func (r scheduleRecord) finding(id string) bool {
	return slices.ContainsFunc(r.Findings, func(f struct {
		ID       string   `json:"id"`
		Evidence []string `json:"evidence"`
	}) bool {
		return f.ID == id
	})
}

func runLoad(t *testing.T, url string, env map[string]string) (scheduleRecord, string) {
	t.Helper()
	record := filepath.Join(t.TempDir(), "record.json")
	env["LLM_BASE_URL"], env["LLM_RECORD"] = url+"/v1", record
	code, out := runK6(t, "e2e/testdata/schedule_load.js", env)
	require.Equal(t, 0, code, out)
	return readScheduleRecord(t, record), out
}

// k6Failed is what k6's own summary counted: llm_requests, llm_failed's
// failures, and of them those tagged error_type dropped.
type k6Failed struct {
	Requests, Failed, DroppedRequests, DroppedFailed float64
}

var k6Line = regexp.MustCompile(`msg="K6 (\{.*\})"`)

func readK6Failed(t *testing.T, out string) k6Failed {
	t.Helper()
	m := k6Line.FindStringSubmatch(out)
	require.NotNil(t, m, out)
	var k k6Failed
	require.NoError(t, json.Unmarshal([]byte(strings.ReplaceAll(m[1], `\"`, `"`)), &k), m[1])
	return k
}

// requireDroppedAreFailed: every credit the schedule dropped is a failed
// call, error type dropped, once, in k6's metrics and in the report's
// failure counts.
func requireDroppedAreFailed(t *testing.T, r scheduleRecord, out string) {
	t.Helper()
	dropped := r.Dispatch.Schedules[0].Dropped
	k := readK6Failed(t, out)
	all := r.Categories["all"]
	t.Logf("k6: %.0f llm_requests, %.0f failed, %.0f of them dropped; report: %d requests, %d failures %v",
		k.Requests, k.Failed, k.DroppedFailed, all.Requests, all.Failures, all.Errors)
	require.InDelta(t, float64(dropped), k.DroppedFailed, 0, "llm_failed counts each dropped credit once, error_type dropped")
	require.InDelta(t, float64(dropped), k.DroppedRequests, 0, "and llm_requests counts it")
	require.GreaterOrEqual(t, k.Failed, k.DroppedFailed)
	require.Equal(t, dropped, all.Errors["dropped"], "the report's failures count them by type")
	require.GreaterOrEqual(t, all.Failures, dropped)
	// Calls the scenario's end cut in flight are the report's (failed,
	// canceled) but not k6's: it takes no sample after the stop.
	require.InDelta(t, k.Requests+float64(all.Errors["canceled"]), float64(all.Requests), 0, "the report's calls are k6's and the cut ones")
	require.Greater(t, float64(all.Failures)/float64(all.Requests), 0.5, "most credits were dropped: the failure rate says so")
}

// A schedule with too few VUs sends late and leaves credits unsent, and says
// so; with enough it keeps time and says nothing; k6's constant-arrival-rate
// with too few VUs drops iterations, and the report says that too.
func TestScheduleLatenessIsMeasuredNotHidden(t *testing.T) {
	if testing.Short() {
		t.Skip("builds k6")
	}
	// 4 slots and 64-token answers of about 15 ms a token: a call takes
	// about a second, so 2 VUs serve about 2 calls/s of the 20 asked for.
	url := startSim(t, "--model", "sim-small=small", "--model", "sim-fast=fast", "--seed", "1")

	behind, out := runLoad(t, url, map[string]string{"MODEL": "sim-small", "RATE": "20", "VUS": "2", "MAX_TOKENS": "64"})
	all := behind.Categories["all"].Metrics
	require.NotNil(t, behind.Dispatch, out)
	s := behind.Dispatch.Schedules[0]
	t.Logf("too few VUs: %d sent, %d late, %d dropped; dispatch delay p50 %.0f ms p99 %.0f ms", s.Claimed, s.Late, s.Dropped,
		all["dispatch_delay"].P50, all["dispatch_delay"].P99)
	require.Positive(t, s.Dropped, "credits due but never sent are counted")
	require.Greater(t, all["dispatch_delay"].P99, 500.0, "the calls went out late, and say so")
	require.Greater(t, all["ttft_from_due"].P50, all["ttft"].P50, "TTFT from the due time includes the lateness")
	require.True(t, behind.finding("generator_behind"), out)
	require.Contains(t, out, "percentiles omit")
	requireDroppedAreFailed(t, behind, out)

	// With k6's default gracefulStop the calls in flight at the end finish:
	// their VUs find the scenario over and drop what is still owed.
	graceful, out := runLoad(t, url, map[string]string{"MODEL": "sim-small", "RATE": "20", "VUS": "2", "MAX_TOKENS": "64",
		"GRACEFUL": "30s"})
	require.Positive(t, graceful.Dispatch.Schedules[0].Dropped, out)
	requireDroppedAreFailed(t, graceful, out)

	onTime, out := runLoad(t, url, map[string]string{"MODEL": "sim-fast", "RATE": "20", "VUS": "20"})
	all = onTime.Categories["all"].Metrics
	t.Logf("enough VUs: dispatch delay p50 %.2f ms p99 %.2f ms over %d calls", all["dispatch_delay"].P50,
		all["dispatch_delay"].P99, all["dispatch_delay"].Count)
	require.InDelta(t, 60, all["dispatch_delay"].Count, 2, "20/s for 3 s")
	require.Zero(t, onTime.Dispatch.Schedules[0].Dropped)
	k := readK6Failed(t, out)
	require.Zero(t, k.DroppedFailed, "an adequately provisioned schedule drops nothing")
	require.Zero(t, onTime.Categories["all"].Errors["dropped"])
	require.Less(t, all["dispatch_delay"].P50, 10.0, "with a VU free for every credit, sends are on time")
	// The P99 is this machine's: on a quiet one it is a few ms, on a shared
	// one the process itself runs late at times. Either way the finding
	// says exactly what the figure says.
	require.Equal(t, all["dispatch_delay"].P99 > 50, onTime.finding("generator_behind"), out)

	car, out := runLoad(t, url, map[string]string{"MODE": "car", "MODEL": "sim-small", "RATE": "20", "VUS": "2", "MAX_TOKENS": "64"})
	require.NotNil(t, car.Dispatch, out)
	require.NotNil(t, car.Dispatch.K6Dropped, "k6's dropped_iterations reach the record")
	t.Logf("constant-arrival-rate with 2 VUs: k6 dropped %.0f iterations", *car.Dispatch.K6Dropped)
	require.Positive(t, *car.Dispatch.K6Dropped)
	require.NotNil(t, car.Dispatch.K6Shortfall, "the VU shortfall reaches the record")
	t.Logf("k6 had %.0f VUs, the offered load needed about %.0f", car.Dispatch.K6Shortfall.VUsMax, car.Dispatch.K6Shortfall.NeededVUs)
	require.InDelta(t, 2, car.Dispatch.K6Shortfall.VUsMax, 0)
	require.Greater(t, car.Dispatch.K6Shortfall.NeededVUs, 2.0, "20/s of ~1 s calls need far more than 2 VUs")
	require.Contains(t, out, "VUs at most")
	require.True(t, car.finding("generator_behind"), out)
	require.Zero(t, car.Categories["all"].Metrics["dispatch_delay"].Count, "k6's executor gives no due time: none is invented")
}

type traceRow struct {
	Timestamp float64  `json:"timestamp"`
	Input     int      `json:"input_length"`
	Output    int      `json:"output_length"`
	HashIDs   []uint32 `json:"hash_ids"`
}

type replayed struct {
	ID                            string
	Seq, Row                      int
	Offset, Delay                 float64
	Input, Output, Prompt, Cached int
	Completion                    int
}

var rowLine = regexp.MustCompile(`msg="ROW (\{.*\})"`)

// A Mooncake trace against llm-sim, read from the disk: credits are due at the trace's offsets,
// sent within a few ms of them, with prompts of exactly input_length tokens
// that hit the prefix cache where the trace's hash_ids say they share a
// prefix, and miss where not.
func TestMooncakeReplayAgainstLLMSim(t *testing.T) {
	// Not parallel: it holds the sends to the trace's offsets within a few
	// ms, a timing that eight tests at once on two cores pushed past 70 ms.
	if testing.Short() {
		t.Skip("builds k6")
	}
	tracePath := filepath.Join(repoRoot(t), "examples", "data", "mooncake-sample.jsonl")
	f, err := os.Open(tracePath) //nolint:gosec // a repository file
	require.NoError(t, err)
	var rows []traceRow
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r traceRow
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		rows = append(rows, r)
	}
	require.NoError(t, f.Close())

	simTrace := filepath.Join(t.TempDir(), "sim-trace.jsonl")
	url := startSim(t, "--model", "sim-fast=fast", "--seed", "1", "--trace", simTrace)
	record := filepath.Join(t.TempDir(), "record.json")
	// Read fromDisk, by a path relative to the script as open() resolves it
	// (examples/trace-replay.js, run by TestExamples, reads through k6's file
	// system).
	code, out := runK6(t, "e2e/testdata/trace_replay.js", map[string]string{
		"LLM_BASE_URL": url + "/v1", "LLM_RECORD": record, "TRACE": "../../examples/data/mooncake-sample.jsonl",
		"FROM_DISK": "1", "RATE_SCALE": "2",
	})
	require.Equal(t, 0, code, out)
	var got []replayed
	for _, m := range rowLine.FindAllStringSubmatch(out, -1) {
		var r replayed
		require.NoError(t, json.Unmarshal([]byte(strings.ReplaceAll(m[1], `\"`, `"`)), &r))
		got = append(got, r)
	}
	require.Len(t, got, len(rows), "every row replayed once")
	sort.Slice(got, func(i, j int) bool { return got[i].Seq < got[j].Seq })

	// The server's own trace says when each request took its slot (where
	// the prefix cache is looked up) and when its prefill ended (where its
	// blocks enter the cache): a row shares for sure the blocks of rows
	// whose prefill ended strictly before it was admitted, and at most those
	// of rows admitted before it. Strictly: sim-fast's steps take no time, so
	// rows admitted in one step (both waiting when it began, as on a loaded
	// machine) all carry its stamp as admission and prefill end, yet each
	// looked the cache up before any of them filled it; a later step admits
	// only requests that came after the last one began, at a later stamp.
	// (The client's send order is not the server's: a call that opens a
	// connection reaches it later.)
	type admission struct{ admitted, prefilled int64 }
	server := map[string]admission{}
	raw, err := os.ReadFile(simTrace) //nolint:gosec // the test's own temp file
	require.NoError(t, err)
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var rec struct {
			RequestID string `json:"request_id"`
			Admitted  int64  `json:"admitted_ns"`
			Prefilled int64  `json:"prefill_end_ns"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &rec))
		server[rec.RequestID] = admission{rec.Admitted, rec.Prefilled}
	}
	leading := func(ids []uint32, seen map[uint32]bool) int {
		n := 0
		for n < len(ids) && seen[ids[n]] {
			n++
		}
		return n
	}
	var delays []float64
	hits, misses := 0, 0
	for i, r := range got {
		want := rows[i]
		require.Equal(t, i, r.Row)
		require.InDelta(t, (want.Timestamp-rows[0].Timestamp)/1000/2, r.Offset, 1e-6, "row %d due at its offset, twice as fast", i)
		require.Equal(t, want.Input, r.Input)
		require.Equal(t, want.Input, r.Prompt, "row %d: the server counted exactly input_length prompt tokens", i)
		require.Equal(t, want.Output, r.Completion, "row %d: exactOutput gets output_length tokens", i)
		delays = append(delays, r.Delay)
		me, ok := server[r.ID]
		require.True(t, ok, "row %d (request %s) is in llm-sim's trace", i, r.ID)
		before, surely := map[uint32]bool{}, map[uint32]bool{}
		for j, o := range got {
			other := server[o.ID]
			if j == i || other.admitted > me.admitted {
				continue
			}
			for _, h := range rows[j].HashIDs {
				before[h] = true
				if other.prefilled > 0 && other.prefilled < me.admitted {
					surely[h] = true
				}
			}
		}
		maybe, sure := leading(want.HashIDs, before), leading(want.HashIDs, surely)
		switch {
		case maybe == 0:
			misses++
			require.Zero(t, r.Cached, "row %d shares no block with a row admitted before it: a miss", i)
		case sure > 0:
			hits++
			require.GreaterOrEqual(t, r.Cached, min(sure*512, want.Input)/16*16, "row %d shares %d blocks with earlier rows: a hit", i, sure)
		}
		require.Less(t, r.Cached, min(maybe*512, want.Input)+512, "row %d: no more than the shared blocks", i)
	}
	t.Logf("%d rows checked as sure hits, %d as misses", hits, misses)
	require.Positive(t, hits, "some rows were admitted after a row sharing their prefix had prefilled")
	sort.Float64s(delays)
	p90 := delays[int(math.Ceil(0.9*float64(len(delays))))-1]
	t.Logf("send - due over %d rows: p50 %.2f ms, p90 %.2f ms, max %.2f ms", len(delays), delays[len(delays)/2], p90,
		delays[len(delays)-1])
	// The tail is this machine's (a shared one runs the process late at
	// times); the bulk of the sends must follow the trace within a few ms.
	require.Less(t, delays[len(delays)/2], 10.0, "sends follow the trace's offsets within a few ms")
	require.Less(t, p90, 25.0)
	require.Contains(t, out, "prefix reuse the trace predicts")
}

var (
	creditLine = regexp.MustCompile(`msg="CREDIT (\d+) ([\d.]+) ([^"]+)"`)
	iterLine   = regexp.MustCompile(`msg="ITER ([^"]+)"`)
)

// One schedule and one dataset over 1, 2, 3 and uneven instances: the union
// of the instances' credits is the single run's, each at the same offset
// with the same item, and the items of 60 shared iterations keyed on
// iterationInTest (which k6 splits 30/15/15 over three segments) are the
// single run's, item for item.
func TestScheduleSplitsExactlyAcrossInstances(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds k6")
	}
	url := startSim(t, "--model", "sim-fast=fast", "--seed", "1")
	run := func(sequence string, segments []string) (credits, iters []string) {
		if len(segments) == 0 {
			segments = []string{""}
		}
		type res struct{ credits, iters []string }
		results := make([]res, len(segments))
		done := make(chan struct{}, len(segments))
		for i, seg := range segments {
			go func() {
				defer func() { done <- struct{}{} }()
				var extra []string
				if seg != "" {
					extra = []string{"--execution-segment", seg, "--execution-segment-sequence", sequence}
				}
				code, out := runK6(t, "e2e/testdata/schedule_split.js", map[string]string{
					"LLM_BASE_URL": url + "/v1", "LLM_RECORD": filepath.Join(t.TempDir(), "r.json")}, extra...)
				if code != 0 {
					t.Errorf("segment %q: k6 exited with %d\n%s", seg, code, out)
					return
				}
				for _, m := range creditLine.FindAllStringSubmatch(out, -1) {
					results[i].credits = append(results[i].credits, fmt.Sprintf("%s %s %s", m[1], m[2], m[3]))
				}
				for _, m := range iterLine.FindAllStringSubmatch(out, -1) {
					results[i].iters = append(results[i].iters, m[1])
				}
			}()
		}
		for range segments {
			<-done
		}
		require.False(t, t.Failed())
		for i, r := range results {
			t.Logf("segment %q: %d credits, %d iterations", segments[i], len(r.credits), len(r.iters))
			credits = append(credits, r.credits...)
			iters = append(iters, r.iters...)
		}
		slices.Sort(credits)
		slices.Sort(iters)
		return credits, iters
	}
	credits, iters := run("", nil)
	require.Len(t, iters, 60)
	require.Greater(t, len(credits), 40, "a 40/s schedule for 2 s")
	for _, c := range []struct {
		sequence string
		segments []string
	}{
		{"0,1/2,1", []string{"0:1/2", "1/2:1"}},
		{"0,1/3,2/3,1", []string{"0:1/3", "1/3:2/3", "2/3:1"}},
		{"0,1/4,1/2,1", []string{"0:1/4", "1/4:1/2", "1/2:1"}},
	} {
		t.Run(c.sequence, func(t *testing.T) {
			gotCredits, gotIters := run(c.sequence, c.segments)
			require.Equal(t, credits, gotCredits, "the instances' credits (seq, offset, item) are the single run's")
			require.Equal(t, iters, gotIters, "the instances' items are the single run's, item for item")
		})
	}
}
