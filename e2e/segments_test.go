package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// One test split across k6 instances (--execution-segment with the same
// --execution-segment-sequence, as k6-operator runs it) against one llm-sim
// must send what a single instance sends: every dataset item once, and the
// configured arrival process once, not one copy per instance.

var (
	itemLine    = regexp.MustCompile(`msg="ITEM ([^"]+)"`)
	arrivalLine = regexp.MustCompile(`msg=ARRIVAL`)
)

// instanceRun is what one k6 instance sent.
type instanceRun struct {
	segment  string
	items    []string
	arrivals int
	record   struct {
		Run struct {
			Segment         string `json:"segment"`
			SegmentSequence string `json:"segment_sequence"`
		} `json:"run"`
	}
}

// runInstances runs the script once per segment of sequence, all at once
// (an empty sequence: one instance, the whole test).
func runInstances(t *testing.T, url, sequence string, segments []string) []instanceRun {
	t.Helper()
	return runScriptInstances(t, "e2e/testdata/segments.js", url, sequence, segments)
}

// runScriptInstances is runInstances for another script that logs its
// items alike.
func runScriptInstances(t *testing.T, script, url, sequence string, segments []string) []instanceRun {
	t.Helper()
	if len(segments) == 0 {
		segments = []string{""}
	}
	runs := make([]instanceRun, len(segments))
	var wg sync.WaitGroup
	for i, seg := range segments {
		wg.Go(func() {
			record := filepath.Join(t.TempDir(), "record.json")
			var extra []string
			if seg != "" {
				extra = []string{"--execution-segment", seg, "--execution-segment-sequence", sequence}
			}
			code, out := runK6(t, script,
				map[string]string{"LLM_BASE_URL": url + "/v1", "LLM_RECORD": record}, extra...)
			r := &runs[i]
			r.segment = seg
			if code != 0 {
				t.Errorf("segment %q: k6 exited with %d\n%s", seg, code, out)
				return
			}
			for _, m := range itemLine.FindAllStringSubmatch(out, -1) {
				r.items = append(r.items, m[1])
			}
			r.arrivals = len(arrivalLine.FindAllString(out, -1))
			raw, err := os.ReadFile(record) //nolint:gosec // the test's own temp file
			if err != nil {
				t.Errorf("segment %q: no run record: %v", seg, err)
				return
			}
			if err := json.Unmarshal(raw, &r.record); err != nil {
				t.Errorf("segment %q: run record: %v", seg, err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return runs
}

func TestSegmentsSplitTheTest(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds k6")
	}
	url := startSim(t, "--model", "sim-fast=fast", "--seed", "1")
	single := runInstances(t, url, "", nil)[0]
	require.Len(t, single.items, 120, "the single instance sends every iteration's item")
	slices.Sort(single.items)
	require.Equal(t, 120, len(slices.Compact(slices.Clone(single.items))), "one pass: 120 distinct items")
	require.Empty(t, single.record.Run.Segment, "the single instance's record covers the whole test")

	for _, c := range []struct {
		sequence string
		segments []string
	}{
		{"0,1/2,1", []string{"0:1/2", "1/2:1"}},
		{"0,1/3,2/3,1", []string{"0:1/3", "1/3:2/3", "2/3:1"}},
		{"0,1/4,1/2,1", []string{"0:1/4", "1/4:1/2", "1/2:1"}},
	} {
		t.Run(fmt.Sprintf("%d instances %s", len(c.segments), c.sequence), func(t *testing.T) {
			runs := runInstances(t, url, c.sequence, c.segments)
			var union []string
			arrivals := 0
			for _, r := range runs {
				require.Equal(t, r.segment, r.record.Run.Segment, "the run record names the segment it covered")
				require.Equal(t, c.sequence, r.record.Run.SegmentSequence)
				t.Logf("segment %s: %d items, %d arrivals", r.segment, len(r.items), r.arrivals)
				union = append(union, r.items...)
				arrivals += r.arrivals
			}
			slices.Sort(union)
			for i := 1; i < len(union); i++ {
				require.NotEqual(t, union[i-1], union[i], "item %s sent by two instances", union[i])
			}
			require.Equal(t, single.items, union, "the instances together send the single instance's items")
			// Each instance runs its share of the one seeded process, so the
			// sum matches the single instance's count up to the edges of
			// the 3 s window (the instances start a little apart), far within
			// Poisson noise; N copies would send N times as many.
			noise := 3 * math.Sqrt(float64(single.arrivals))
			t.Logf("arrivals: %d over %d instances, %d on one (Poisson 3σ ±%.0f)", arrivals, len(runs), single.arrivals, noise)
			require.InDelta(t, single.arrivals, arrivals, noise)
		})
	}
}

// The shape users write: one next() per iteration of the default function,
// 60 shared iterations on 4 VUs over three segments. k6 runs them 30/15/15
// (the iterations follow the VUs), past the dataset's even stripes; next()
// takes each iteration's draw of the whole test, so the three instances send
// each of the 60 items exactly once.
func TestSegmentsNextExact(t *testing.T) {
	if testing.Short() {
		t.Skip("builds k6")
	}
	t.Parallel()
	url := startSim(t, "--model", "sim-fast=fast", "--seed", "1")
	runs := runScriptInstances(t, "e2e/testdata/segments_next.js", url, "0,1/3,2/3,1",
		[]string{"0:1/3", "1/3:2/3", "2/3:1"})
	counts := map[string]int{}
	var sizes []int
	for _, r := range runs {
		sizes = append(sizes, len(r.items))
		for _, id := range r.items {
			counts[id]++
		}
	}
	require.Equal(t, []int{30, 15, 15}, sizes, "k6's split of 60 shared iterations on 4 VUs")
	require.Len(t, counts, 60, "every one of the 60 items sent")
	for id, n := range counts {
		require.Equal(t, 1, n, "item %s sent %d times", id, n)
	}
}
