package config

import "github.com/llmstream/xk6-llmstream/internal/stream"

// Call is a validated params object of client.chat(body, params).
type Call struct {
	Tags       map[string]string `opt:"tags"`
	Headers    map[string]string `opt:"headers"`
	Timeouts   stream.Timeouts   `opt:"timeouts" want:"an object like {firstToken: '10s', total: '1m'}"`
	Path       string            `opt:"path"`
	ResultGaps bool              `opt:"gaps"` // the result lists the call's gaps
	// OnEvent (a JS function) and Item (a dataset item) are taken by the root
	// package, which knows what a JS function is.
	OnEvent any `opt:"onEvent"`
	Item    any `opt:"item"`
}

// reservedTags are set by the client; a call may not override them.
var reservedTags = []string{"error_type", "cache", "protocol"} //nolint:gochecknoglobals // read-only table

// ParseCall validates params against the client's defaults: timeouts not
// given keep the client's, and so do path and gaps.
func ParseCall(o map[string]any, c *Client) (*Call, error) {
	call := &Call{Timeouts: c.Timeouts, Path: c.Path, ResultGaps: c.ResultGaps}
	if o == nil {
		return call, nil
	}
	if err := Decode("chat params", o, call); err != nil {
		return nil, err
	}
	if call.Path == "" {
		call.Path = c.Path
	}
	return call, nil
}

func (c *Call) check() error {
	for _, k := range reservedTags {
		if _, ok := c.Tags[k]; ok {
			return fieldErr("tags."+k, "is set by the client itself and cannot be overridden")
		}
	}
	return nil
}
