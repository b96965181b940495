package servermetrics

import (
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// vLLM's cache configuration, an info gauge (value 1) whose labels are the
// settings: block_size, num_gpu_blocks, enable_prefix_caching, …
const cacheConfigFamily = "vllm:cache_config_info"

// serverConfig reads the configuration labels of the exposition (the first
// series of the info family, without the labels that name the engine or
// model); nil when the server exposes none.
func serverConfig(fams map[string]*dto.MetricFamily) map[string]string {
	f := fams[cacheConfigFamily]
	if f == nil || len(f.GetMetric()) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, lp := range f.GetMetric()[0].GetLabel() {
		switch lp.GetName() {
		case "engine", "model_name", "model":
		default:
			out[lp.GetName()] = lp.GetValue()
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// ConfigText writes a configuration as "key value, …", sorted.
func ConfigText(c map[string]string) string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + " " + c[k]
	}
	return strings.Join(parts, ", ")
}
