package llmstream

import "github.com/llmstream/xk6-llmstream/internal/dataset"

// sharedState is process-wide state beyond stream counting: the dataset store
// and the report collector hang off it as those pieces land.
type sharedState struct {
	datasets *dataset.Store // datasets and arrival processes, one per source + options
}

func newSharedState() *sharedState { return &sharedState{datasets: dataset.NewStore()} }

// extraExports are the named exports contributed by other parts of the module
// (datasets, arrivals, report).
func (mi *ModuleInstance) extraExports() map[string]any { return mi.datasetExports() }
