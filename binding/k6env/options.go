package k6env

// JS option objects: read as Go maps (exportObject) or decoded into Go
// structs (decodeOptions) by internal/config's rule, and JS values quoted
// as the options' errors quote them.

import (
	"encoding/json"
	"fmt"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/common"

	"github.com/llmstream/xk6-llmstream/internal/config"
)

// exportObject exports an options object; null and undefined are absent (nil).
func ExportObject(v sobek.Value, what string) (map[string]any, error) {
	if common.IsNullish(v) {
		return nil, nil //nolint:nilnil // absent is not an error
	}
	m, ok := v.Export().(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s must be an object, got %s", what, v.ExportType())
	}
	return m, nil
}

// decodeOptions reads a JS options object into a Go struct with
// config.Decode's rule (exact names, unknown ones listed, durations as '3s' or
// milliseconds); null and undefined leave into as it is.
func DecodeOptions(v sobek.Value, where string, into any) error {
	if common.IsNullish(v) {
		return nil
	}
	return config.Decode(where, v.Export(), into) //nolint:wrapcheck // names the object itself
}

// describeJS quotes strings, as the options' errors do.
func DescribeJS(v sobek.Value) string {
	if s, ok := v.Export().(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return v.String()
}

// storeKey identifies a build by kind and canonical options (encoding/json
// sorts map keys, so equal options give equal keys).
func StoreKey(kind string, parts ...any) string {
	b, _ := json.Marshal(parts) //nolint:errchkjson // plain data
	return kind + ":" + string(b)
}
