package datasets

import (
	"fmt"
	"math"

	"go.k6.io/k6/lib"
)

// next() in a test split across k6 instances: k6 does not split iterations
// the way the dataset is striped (shared iterations follow the VUs, so 60
// iterations on 4 VUs over three equal segments run 30/15/15), so an
// instance drawing its own stripe in turn runs past it and repeats items
// while another leaves some unsent. k6 numbers each scenario's iterations
// uniquely across the instances (exec.scenario.iterationInTest), so the
// first next() of an iteration takes the whole test's draw of that number:
// the instances together draw exactly what one instance would, each item
// once, whatever the executor and the VU split. A test run whole keeps the
// process-wide counter, exact for any number of draws per iteration.

// iterationDraws is what a VU has drawn in its current iteration.
type iterationDraws struct {
	started bool
	vuIter  int64  // k6's iteration number in the VU (lib.State.Iteration)
	inTest  uint64 // the scenario's iteration number in the whole test
	extra   uint64 // draws after the first in this iteration
}

// inTest is the whole test's draw number for this next(), when it is made in
// an iteration of a scenario (not in setup(), teardown() or the init code).
// The draws after the first of an iteration continue from it, which are the
// draws of the following iterations: nothing numbers them uniquely across
// instances, so a script that draws several items per iteration is warned
// once and pointed to drawInTest.
func (j *JSDataset) inTest() (uint64, bool) {
	st := j.scope.VU.State()
	if st == nil || st.GetScenarioGlobalVUIter == nil {
		return 0, false
	}
	it := st.GetScenarioGlobalVUIter()
	if it == math.MaxUint64 { // k6's value before the VU's first iteration
		return 0, false
	}
	if !j.iter.started || j.iter.vuIter != st.Iteration || j.iter.inTest != it {
		j.iter = iterationDraws{started: true, vuIter: st.Iteration, inTest: it}
		j.checkScenario()
		return it, true
	}
	j.iter.extra++
	if j.iter.extra == 1 {
		j.scope.WarnOnce(fmt.Sprintf("next-repeats:%p", j.d), "llmstream: %s: next() drawn more than once in an "+
			"iteration of a test split across instances: each iteration's first draw is the whole test's draw "+
			"exec.scenario.iterationInTest and the next ones continue from it, so they repeat items that later "+
			"iterations draw; for m items per iteration use drawInTest(exec.scenario.iterationInTest * m + k), "+
			"k from 0 to m-1", j.d.Name())
	}
	return it + j.iter.extra, true
}

// checkScenario warns once when a second scenario draws from the dataset:
// each scenario numbers its iterations from 0, so two scenarios' iterations
// take the same draws.
func (j *JSDataset) checkScenario() {
	ss := lib.GetScenarioState(j.scope.VU.Context())
	if ss == nil {
		return
	}
	key := fmt.Sprintf("%p", j.d)
	if first := j.scope.FirstHolder("next-scenario:"+key, ss.Name); first != ss.Name {
		j.scope.WarnOnce("next-scenarios:"+key, "llmstream: %s: next() in scenarios %q and %q of a test split "+
			"across instances: each scenario numbers its iterations from 0 (exec.scenario.iterationInTest), so "+
			"their iterations draw the same items; give each scenario its own dataset (another seed or file), or "+
			"offset drawInTest(exec.scenario.iterationInTest + offset) by scenario", j.d.Name(), first, ss.Name)
	}
}
