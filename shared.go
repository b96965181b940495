package llmstream

// sharedState is process-wide state beyond stream counting: the dataset store
// and the report collector hang off it as those pieces land.
type sharedState struct{}

func newSharedState() *sharedState { return &sharedState{} }

// extraExports are the named exports contributed by other parts of the module
// (datasets, arrivals, report).
func (mi *ModuleInstance) extraExports() map[string]any { return nil }
