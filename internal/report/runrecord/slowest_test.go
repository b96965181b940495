package runrecord

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSlowCallsKeepTheKSlowestHoweverSplit: offered one by one or merged from
// any split, the top-k is the k slowest of all, slowest first.
func TestSlowCallsKeepTheKSlowestHoweverSplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	calls := make([]SlowCall, 200)
	for i := range calls {
		calls[i] = SlowCall{TraceID: fmt.Sprintf("%032x", i+1), E2EMS: float64(rng.IntN(50))} // ties on purpose
	}
	want := slices.Clone(calls)
	slices.SortFunc(want, slowerFirst)
	want = want[:SlowestKept]

	var one SlowCalls
	parts := make([]SlowCalls, 4)
	for _, c := range calls {
		one.Add(c)
		parts[rng.IntN(len(parts))].Add(c)
	}
	require.Equal(t, want, []SlowCall(one))
	var merged SlowCalls
	for _, i := range rng.Perm(len(parts)) {
		merged.Merge(parts[i])
	}
	require.Equal(t, want, []SlowCall(merged))
	require.GreaterOrEqual(t, merged[0].E2EMS, merged[SlowestKept-1].E2EMS)
}

// TestSlowCallsCloneIsIndependent: a group's clone keeps its own list.
func TestSlowCallsCloneIsIndependent(t *testing.T) {
	var s SlowCalls
	s.Add(SlowCall{TraceID: "a", E2EMS: 1})
	c := s.Clone()
	c.Add(SlowCall{TraceID: "b", E2EMS: 2})
	require.Len(t, s, 1)
	require.Len(t, c, 2)
}
