package module

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.k6.io/k6/lib"
)

// next() in a test split across k6 instances, with k6's own numbering of
// iterations faked in the VU state as k6's executors set it.

const nextInit = `const d = llm.Dataset.synthetic({seed: 7, variants: 30, mix: {short: 1, medium: 1}});`

// instanceVUs are n VUs of one k6 instance (one process: one root module)
// running segment of sequence, in scenario.
func instanceVUs(t *testing.T, segment, sequence, scenario string, n int64) []*testVU {
	t.Helper()
	root := New()
	vus := make([]*testVU, n)
	for i := range vus {
		vu := newDatasetVU(t, root, nil, nextInit)
		seg, err := lib.NewExecutionSegmentFromString(segment)
		require.NoError(t, err)
		seq, err := lib.NewExecutionSegmentSequenceFromString(sequence)
		require.NoError(t, err)
		vu.state().Options.ExecutionSegment, vu.state().Options.ExecutionSegmentSequence = seg, &seq
		vu.rt.VU.CtxField = lib.WithScenarioState(vu.rt.VU.CtxField, &lib.ScenarioState{Name: scenario})
		vu.state().Iteration = -1
		vus[i] = vu
	}
	return vus
}

// iterate starts the VU's next iteration, numbered inTest in the whole test,
// as k6's runner does before it calls the default function.
func iterate(vu *testVU, inTest uint64) {
	vu.state().Iteration++
	vu.state().GetScenarioGlobalVUIter = func() uint64 { return inTest }
}

// sharedIterations runs a shared-iterations scenario's part on one instance
// as k6 splits it (iterations striped over a tuple of the VU count, VUs
// over the segment) and calls draw in each iteration.
func sharedIterations(t *testing.T, segment, sequence string, vus, iterations int64,
	draw func(vu *testVU) []string,
) []string {
	t.Helper()
	seg, err := lib.NewExecutionSegmentFromString(segment)
	require.NoError(t, err)
	seq, err := lib.NewExecutionSegmentSequenceFromString(sequence)
	require.NoError(t, err)
	et, err := lib.NewExecutionTuple(seg, &seq)
	require.NoError(t, err)
	byVUs, err := et.GetNewExecutionTupleFromValue(vus)
	require.NoError(t, err)
	mine := byVUs.ScaleInt64(iterations)
	pool := instanceVUs(t, segment, sequence, "items", et.ScaleInt64(vus))
	idx := lib.NewSegmentedIndex(byVUs)
	var ids []string
	for k := range mine {
		_, unscaled := idx.Next()
		vu := pool[k%int64(len(pool))]
		iterate(vu, uint64(unscaled-1)) //nolint:gosec // k6's unscaled index starts at 1
		ids = append(ids, draw(vu)...)
	}
	return ids
}

var threeSegments = []string{"0:1/3", "1/3:2/3", "2/3:1"}

const threeSequence = "0,1/3,2/3,1"

// 60 shared iterations on 4 VUs over three equal segments run 30/15/15 (the
// iterations follow the VUs): one next() per iteration still draws each of
// the 60 items exactly once over the three instances.
func TestNextExactAcrossInstances(t *testing.T) {
	t.Parallel()
	single := instanceVU(t, "", "", nextInit)
	want := runJSON[[]string](t, single, `JSON.stringify(Array.from({length: 60}, () => d.next().id))`)
	require.Len(t, uniq(want), 60, "one pass: 60 distinct items")

	var union []string
	var perInstance []int
	for _, seg := range threeSegments {
		ids := sharedIterations(t, seg, threeSequence, 4, 60, func(vu *testVU) []string {
			return []string{vu.run(`d.next().id`).String()}
		})
		perInstance = append(perInstance, len(ids))
		union = append(union, ids...)
	}
	require.Equal(t, []int{30, 15, 15}, perInstance, "k6's split of the iterations")
	require.ElementsMatch(t, want, union, "the instances together draw the single run's items, each once")
}

// draws in setup() (no iteration) stay on the instance's stripe, and info()
// counts the draws an instance took.
func TestNextOutsideAnIterationKeepsTheStripe(t *testing.T) {
	t.Parallel()
	vu := instanceVUs(t, "1/3:2/3", threeSequence, "items", 1)[0]
	first := vu.run(`d.next().id`).String()
	require.Equal(t, vu.run(`d.draw(0).id`).String(), first, "outside an iteration: the stripe's draw 0")
	iterate(vu, 7)
	require.Equal(t, vu.run(`d.drawInTest(7).id`).String(), vu.run(`d.next().id`).String())
	require.InDelta(t, 2, runJSON[map[string]any](t, vu, `JSON.stringify(d.info())`)["draws"], 0)
	require.NotContains(t, vu.logs.String(), "more than once")
}

// Several draws per iteration continue from the iteration's draw, which can
// repeat the next iterations' items: warned once per dataset and process.
func TestNextSeveralDrawsPerIterationWarnsOnce(t *testing.T) {
	t.Parallel()
	vus := instanceVUs(t, "0:1/3", threeSequence, "items", 2)
	for i, vu := range vus {
		iterate(vu, uint64(10*i)) //nolint:gosec // small test numbers
		got := runJSON[[]string](t, vu, `JSON.stringify([d.next().id, d.next().id, d.next().id])`)
		want := runJSON[[]string](t, vu, fmt.Sprintf(`JSON.stringify([%d, %d, %d].map(n => d.drawInTest(n).id))`, 10*i, 10*i+1, 10*i+2))
		require.Equal(t, want, got, "the draws after the first continue from the iteration's draw")
	}
	logs := vus[0].logs.String() + vus[1].logs.String()
	require.Equal(t, 1, strings.Count(logs, "next() drawn more than once in an iteration"), logs)
	require.Contains(t, logs, "drawInTest(exec.scenario.iterationInTest * m + k)")
}

// Each scenario numbers its iterations from 0: a second scenario drawing
// from the same dataset is warned about, once.
func TestNextInTwoScenariosWarns(t *testing.T) {
	t.Parallel()
	vus := instanceVUs(t, "0:1/3", threeSequence, "first", 2)
	vus[1].rt.VU.CtxField = lib.WithScenarioState(vus[1].rt.VU.CtxField, &lib.ScenarioState{Name: "second"})
	for i := range 3 {
		for _, vu := range vus {
			iterate(vu, uint64(i)) //nolint:gosec // small test numbers
			vu.run(`d.next()`)
		}
	}
	logs := vus[0].logs.String() + vus[1].logs.String()
	require.Equal(t, 1, strings.Count(logs, `next() in scenarios \"first\" and \"second\"`), logs)
}

// A test run whole keeps the process-wide counter: several draws in one
// iteration are all distinct, and nothing is warned.
func TestNextWholeTestKeepsTheCounter(t *testing.T) {
	t.Parallel()
	vu := instanceVU(t, "", "", nextInit)
	var ids []string
	for i := range 20 {
		iterate(vu, uint64(i)) //nolint:gosec // small test numbers
		ids = append(ids, runJSON[[]string](t, vu, `JSON.stringify([d.next().id, d.next().id, d.next().id])`)...)
	}
	require.Len(t, uniq(ids), 60)
	require.Empty(t, vu.logs.String())
}

func uniq(ids []string) map[string]bool {
	out := map[string]bool{}
	for _, id := range ids {
		out[id] = true
	}
	return out
}
