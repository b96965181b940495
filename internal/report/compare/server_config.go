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

// ServerModelDifferences lists, per endpoint both runs read, what changed in
// the served models (their /v1/models): a model only one run served, or a
// context length that changed (a different max_model_len changes what the
// KV cache holds per request). A side that did not read the list says so.
func ServerModelDifferences(cur, base []servermetrics.View) []string {
	var out []string
	for _, v := range cur {
		for _, b := range base {
			if b.Endpoint != v.Endpoint || (len(v.Models) == 0 && len(b.Models) == 0) {
				continue
			}
			if len(v.Models) == 0 || len(b.Models) == 0 {
				out = append(out, fmt.Sprintf("server %s models: %s (baseline %s)", v.Endpoint, modelsOrUnknown(v.Models), modelsOrUnknown(b.Models)))
				continue
			}
			if changed := modelChanges(v.Models, b.Models); len(changed) > 0 {
				out = append(out, fmt.Sprintf("server %s models: %s", v.Endpoint, strings.Join(changed, ", ")))
			}
		}
	}
	return out
}

// modelChanges are the models only one side served and the context lengths
// that differ, in the current run's order, then the baseline's.
func modelChanges(cur, base []servermetrics.ServedModel) []string {
	was := make(map[string]*int64, len(base))
	for _, m := range base {
		was[m.ID] = m.MaxModelLen
	}
	now := make(map[string]bool, len(cur))
	var out []string
	for _, m := range cur {
		now[m.ID] = true
		b, ok := was[m.ID]
		switch {
		case !ok:
			out = append(out, m.ID+" served (baseline not)")
		case !sameLength(m.MaxModelLen, b):
			out = append(out, fmt.Sprintf("%s context %s (baseline %s)", m.ID, lengthText(m.MaxModelLen), lengthText(b)))
		}
	}
	for _, m := range base {
		if !now[m.ID] {
			out = append(out, m.ID+" not served (baseline served it)")
		}
	}
	return out
}

func sameLength(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func lengthText(n *int64) string {
	if n == nil {
		return "unknown"
	}
	return fmt.Sprintf("%d", *n)
}

func modelsOrUnknown(ms []servermetrics.ServedModel) string {
	if len(ms) == 0 {
		return "unknown"
	}
	return servermetrics.ModelsText(ms)
}
