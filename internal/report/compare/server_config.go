package compare

import (
	"fmt"
	"sort"
	"strings"

	"github.com/llmstream/xk6-llmstream/internal/servermetrics"
)

// ServerConfigDifferences lists, per endpoint both runs read, the server
// settings that changed (vLLM's cache_config_info labels): a different
// block size or prefix caching is a different set-up, whose figures measure
// it too. A setting only one side exposes is named as unknown on the other.
func ServerConfigDifferences(cur, base []servermetrics.View) []string {
	var out []string
	for _, v := range cur {
		for _, b := range base {
			if b.Endpoint != v.Endpoint || (len(v.Config) == 0 && len(b.Config) == 0) {
				continue
			}
			keys := map[string]bool{}
			for k := range v.Config {
				keys[k] = true
			}
			for k := range b.Config {
				keys[k] = true
			}
			var changed []string
			for k := range keys {
				now, okNow := v.Config[k]
				was, okWas := b.Config[k]
				switch {
				case okNow && okWas && now != was:
					changed = append(changed, fmt.Sprintf("%s %s (baseline %s)", k, now, was))
				case okNow != okWas:
					changed = append(changed, fmt.Sprintf("%s %s (baseline %s)", k, orUnknownSetting(now, okNow), orUnknownSetting(was, okWas)))
				}
			}
			if len(changed) > 0 {
				sort.Strings(changed)
				out = append(out, fmt.Sprintf("server %s configuration: %s", v.Endpoint, strings.Join(changed, ", ")))
			}
		}
	}
	return out
}

func orUnknownSetting(v string, ok bool) string {
	if !ok {
		return "unknown"
	}
	return v
}
