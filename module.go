// Package llmstream is the k6 extension k6/x/llmstream: a streaming LLM client
// whose per-event timing happens in Go, at byte arrival, and turns every answer
// into k6 metrics (DESIGN.md), plus dataset helpers and a report.
package llmstream

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/common"
	"go.k6.io/k6/js/modules"

	"github.com/llmstream/xk6-llmstream/internal/dataset"
)

// ImportPath is the module's name in scripts. (k6/x/llm is taken by another
// public extension; two extensions with one path make k6 panic at start.)
const ImportPath = "k6/x/llmstream"

// Version is reported in run records.
const Version = "v0.1.0"

func init() {
	modules.Register(ImportPath, New())
}

// RootModule is process-wide: one per k6 process, shared by every VU. State that
// must be shared (stream counts, datasets, report statistics) lives here.
type RootModule struct {
	active  atomic.Int64 // streams in flight in this process
	shared  *sharedState
	report  *reportState
	segment segmentState // the share of a split test this instance runs
}

// New returns the root module.
func New() *RootModule {
	return &RootModule{shared: newSharedState(), report: &reportState{}}
}

// ModuleInstance is one VU's view of the module.
type ModuleInstance struct {
	vu      modules.VU
	root    *RootModule
	metrics *llmMetrics
}

var (
	_ modules.Module   = (*RootModule)(nil)
	_ modules.Instance = (*ModuleInstance)(nil)
)

// NewModuleInstance runs in the init context of every VU: metrics are registered
// here, eagerly, so thresholds on them validate.
func (r *RootModule) NewModuleInstance(vu modules.VU) modules.Instance {
	env := vu.InitEnv()
	if env == nil {
		common.Throw(vu.Runtime(), errors.New("k6/x/llmstream must be imported in the init context"))
	}
	m, err := registerMetrics(env.Registry)
	if err != nil {
		common.Throw(vu.Runtime(), err)
	}
	return &ModuleInstance{vu: vu, root: r, metrics: m}
}

// Exports lists the JS names of the module.
func (mi *ModuleInstance) Exports() modules.Exports {
	named := map[string]any{
		"Client":       mi.newClient,
		"version":      Version,
		"report":       mi.report,
		"collect":      mi.collect,
		"loadBaseline": mi.loadBaseline,
	}
	for k, v := range mi.extraExports() {
		named[k] = v
	}
	return modules.Exports{Named: named}
}

// newClient is the JS constructor `new Client(options)`.
func (mi *ModuleInstance) newClient(call sobek.ConstructorCall) *sobek.Object {
	rt := mi.vu.Runtime()
	c, err := mi.parseClient(call.Argument(0))
	if err != nil {
		common.Throw(rt, err)
	}
	return rt.ToValue(c).ToObject(rt)
}

func exportObject(v sobek.Value, what string) (map[string]any, error) {
	if v == nil || sobek.IsUndefined(v) || sobek.IsNull(v) {
		return nil, nil //nolint:nilnil // absent is not an error
	}
	m, ok := v.Export().(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s must be an object, got %s", what, v.ExportType())
	}
	return m, nil
}

// sharedState is process-wide state beyond stream counting: the dataset store
// and the report collector hang off it as those pieces land.
type sharedState struct {
	datasets *dataset.Store // datasets and arrival processes, one per source + options
}

func newSharedState() *sharedState { return &sharedState{datasets: dataset.NewStore()} }

// extraExports are the named exports contributed by other parts of the module
// (datasets, arrivals, report).
func (mi *ModuleInstance) extraExports() map[string]any { return mi.datasetExports() }
