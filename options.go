package llmstream

// JS option objects, as Go maps: the one way an options argument is read
// before internal/config decodes it.

import (
	"fmt"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/common"
)

// exportObject exports an options object; null and undefined are absent (nil).
func exportObject(v sobek.Value, what string) (map[string]any, error) {
	if common.IsNullish(v) {
		return nil, nil //nolint:nilnil // absent is not an error
	}
	m, ok := v.Export().(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s must be an object, got %s", what, v.ExportType())
	}
	return m, nil
}
