package module

import (
	"encoding/json"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"go.k6.io/k6/lib"
)

// instanceVU is a VU of a k6 instance (its own process: its own root module)
// running segment of sequence; an empty segment is a test run whole.
func instanceVU(t *testing.T, segment, sequence, initCode string) *testVU {
	t.Helper()
	vu := newDatasetVU(t, New(), nil, initCode)
	if segment != "" {
		seg, err := lib.NewExecutionSegmentFromString(segment)
		require.NoError(t, err)
		vu.state().Options.ExecutionSegment = seg
	}
	if sequence != "" {
		seq, err := lib.NewExecutionSegmentSequenceFromString(sequence)
		require.NoError(t, err)
		vu.state().Options.ExecutionSegmentSequence = &seq
	}
	return vu
}

// runJSON runs code whose value is JSON and decodes it.
func runJSON[T any](t *testing.T, vu *testVU, code string) T {
	t.Helper()
	var out T
	require.NoError(t, json.Unmarshal([]byte(vu.run(code).String()), &out))
	return out
}

const splitInit = `const d = llm.Dataset.synthetic({seed: 7, variants: 60, mix: {short: 1, medium: 1}});
	const a = llm.Arrivals.poisson({rate: 30, seed: 5});`

// k6 instances on the segments of one sequence draw, together, the items one
// instance draws alone, none twice, and run the one arrival process of the
// whole test between them.
func TestInstancesSplitDatasetAndArrivals(t *testing.T) {
	t.Parallel()
	single := instanceVU(t, "", "", splitInit)
	wantIDs := runJSON[[]string](t, single, `JSON.stringify(Array.from({length: 120}, () => d.next().id))`)
	wantArrivals := runJSON[[]float64](t, single, `JSON.stringify(a.offsets(20))`)
	require.Equal(t, "0:1", runJSON[map[string]any](t, single, `JSON.stringify(a.stats())`)["segment"])

	for _, c := range []struct {
		sequence string
		segments []string
		draws    []int // each instance's k6 share of 120 iterations: one pass through the items
	}{
		{"0,1/2,1", []string{"0:1/2", "1/2:1"}, []int{60, 60}},
		{"0,1/3,2/3,1", []string{"0:1/3", "1/3:2/3", "2/3:1"}, []int{40, 40, 40}},
		{"0,1/4,1/2,1", []string{"0:1/4", "1/4:1/2", "1/2:1"}, []int{30, 30, 60}},
	} {
		var ids []string
		var arrivals []float64
		for i, seg := range c.segments {
			vu := instanceVU(t, seg, c.sequence, splitInit)
			got := runJSON[[]string](t, vu, `JSON.stringify(Array.from({length: `+strconv.Itoa(c.draws[i])+`}, () => d.next().id))`)
			ids = append(ids, got...)
			arrivals = append(arrivals, runJSON[[]float64](t, vu, `JSON.stringify(a.offsets(20))`)...)
			info := runJSON[map[string]any](t, vu, `JSON.stringify(d.info().segment)`)
			require.Equal(t, seg, info["segment"], c.sequence)
			require.Equal(t, c.sequence, info["sequence"])
		}
		require.ElementsMatch(t, wantIDs, ids, "%s: the instances together must draw what one instance draws", c.sequence)
		slices.Sort(arrivals)
		require.Equal(t, wantArrivals, arrivals, "%s: the instances together must run the one process", c.sequence)
	}
}

// Without a segment nothing changes: next() and draw() are the dataset's
// one sequence, the same in the init context and in a VU.
func TestWholeTestDrawsUnchanged(t *testing.T) {
	t.Parallel()
	vu := instanceVU(t, "", "", splitInit+`const early = d.draw(3).id;`)
	got := runJSON[[]string](t, vu, `JSON.stringify([early, d.draw(3).id, d.next().id, d.draw(0).id])`)
	require.Equal(t, got[0], got[1])
	require.Equal(t, got[2], got[3])
	whole := runJSON[map[string]any](t, vu, `JSON.stringify(d.info().segment)`)
	require.Equal(t, "0:1", whole["segment"])
	require.InDelta(t, 1.0, whole["fraction"], 0)
}

// A segment given without its sequence is striped as k6 does (the sequence
// filled in around it), with a warning: instances that do not share one
// sequence may overlap, in k6's iterations as in the extension's draws.
func TestSegmentWithoutSequenceWarns(t *testing.T) {
	t.Parallel()
	vu := instanceVU(t, "1/3:2/3", "", splitInit)
	vu.run(`d.next(); d.next()`)
	require.Contains(t, vu.logs.String(), "execution segment 1/3:2/3 without --execution-segment-sequence")
	// the run record says which share it covers, though no call was made
	run := runJSON[map[string]any](t, vu, `JSON.stringify(JSON.parse(llm.report(null, {json: 'r.json', stdout: false})['r.json']).run)`)
	require.Equal(t, "1/3:2/3", run["segment"])
	require.Equal(t, "0,1/3,2/3,1", run["segment_sequence"])
}
