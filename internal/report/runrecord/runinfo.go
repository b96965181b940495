package runrecord

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// RunInfo is how a run was made: the load shape, the data, the clients and
// the versions. The record keeps it so that a comparison with a baseline can
// say when the two runs were not made the same way (a verdict between a
// 50-VU run and a 20-VU run, or two models, measures the set-up, not the
// service), and so that a merge of records from several k6 instances can
// check they ran one test.
type RunInfo struct {
	K6Version     string `json:"k6_version,omitempty"`
	ModuleVersion string `json:"module_version,omitempty"`
	// Load is k6's scenarios as k6 resolved them (executor, VUs, stages,
	// iterations, arrival rate…), keyed by scenario name, as k6 writes them in JSON.
	Load     map[string]any `json:"load,omitempty"`
	Datasets []DatasetInfo  `json:"datasets,omitempty"`
	Clients  []ClientInfo   `json:"clients,omitempty"`
	// Segment is the k6 execution segment this instance ran ("0:1/2"); empty
	// means the whole test. SegmentSequence is the sequence it belongs to, if given.
	Segment         string `json:"segment,omitempty"`
	SegmentSequence string `json:"segment_sequence,omitempty"`
	// Fingerprint identifies the test (fingerprint.go); nil in records of
	// older versions.
	Fingerprint *Fingerprint `json:"fingerprint,omitempty"`
}

// DatasetInfo identifies a Dataset: where its items came from and how they are drawn.
type DatasetInfo struct {
	Source  string         `json:"source"`            // "synthetic", or the file as the script named it
	Options map[string]any `json:"options,omitempty"` // the options as given (seed, categories, weights…)
	Items   int            `json:"items"`
	Digest  string         `json:"digest,omitempty"` // SHA-256 of a loaded file's bytes
}

// ClientInfo is one Client's settings that change what is measured. Host is
// scheme://host[:port] only: never a user, password, path or query.
type ClientInfo struct {
	Name     string `json:"name,omitempty"`
	Protocol string `json:"protocol"`
	Model    string `json:"model,omitempty"`
	Host     string `json:"host"`
}

// ClientHost is what a record keeps of a base URL: scheme://host[:port].
// The user and password, the path (some gateways put a key there) and the
// query (some put it there) are left out.
func ClientHost(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return "(not a URL)"
	}
	return u.Scheme + "://" + u.Host
}

// identity is what must be equal for two records to be parts of one test:
// everything but the versions and the segment.
func (ri *RunInfo) identity() map[string]any {
	if ri == nil {
		return nil
	}
	return flatten(map[string]any{"load": ri.Load, "datasets": ri.Datasets, "clients": ri.Clients})
}

// IdentityDifferences lists how runs a and b differ in what must be equal
// for their records to be parts of one test; none when they are.
func IdentityDifferences(a, b *RunInfo) []string { return diffFlat(a.identity(), b.identity()) }

func (ri *RunInfo) versions() map[string]any {
	if ri == nil {
		return nil
	}
	return map[string]any{"k6": ri.K6Version, "module": ri.ModuleVersion}
}

// Differences lists, in words, how run b was made differently from run a
// ("load default.vus: 50 vs 20"), a's value first. Either may be nil (an
// older record without the information): then nothing can be said.
func Differences(a, b *RunInfo) []string {
	if a == nil || b == nil {
		return nil
	}
	out := diffFlat(a.identity(), b.identity())
	out = append(out, diffFlat(flatten(a.versions()), flatten(b.versions()))...)
	if sa, sb := SegmentName(a.Segment), SegmentName(b.Segment); sa != sb {
		out = append(out, fmt.Sprintf("execution segment %s vs %s", sa, sb))
	}
	return out
}

// SegmentName names an execution segment for a reader: "whole test" for none.
func SegmentName(s string) string {
	if s == "" {
		return "whole test"
	}
	return s
}

// diffFlat compares two flattened maps key by key.
func diffFlat(a, b map[string]any) []string {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var out []string
	for _, k := range sorted {
		va, oka := a[k]
		vb, okb := b[k]
		if oka && okb && va == vb {
			continue
		}
		out = append(out, fmt.Sprintf("%s %s vs %s", k, showValue(va, oka), showValue(vb, okb)))
	}
	return out
}

func showValue(v any, ok bool) string {
	if !ok || v == nil || v == "" {
		return "(none)"
	}
	return fmt.Sprint(v)
}

// flatten turns nested data into "a.b.c" → scalar, going through JSON so
// that Go structs, maps and numbers compare the same way whatever produced
// them. Lists of clients and datasets are keyed by name or position, so one
// changed model reads "clients.chat.model", not a whole list.
func flatten(v map[string]any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		return map[string]any{"(unreadable)": err.Error()}
	}
	var generic any
	_ = json.Unmarshal(b, &generic)
	out := map[string]any{}
	flattenInto(out, "", generic)
	return out
}

func flattenInto(out map[string]any, prefix string, v any) {
	join := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			flattenInto(out, join(k), x)
		}
	case []any:
		for i, x := range t {
			key := fmt.Sprint(i + 1)
			if m, ok := x.(map[string]any); ok {
				if name, ok := m["name"].(string); ok && name != "" {
					key = name
				}
			}
			flattenInto(out, join(key), x)
		}
	case nil:
	default:
		if s, ok := t.(string); ok && s == "" {
			return
		}
		out[prefix] = t
	}
}

// describeDifferences is the one-line form used above the verdicts.
func describeDifferences(d []string) string {
	return "baseline differs (this run vs baseline): " + strings.Join(d, "; ")
}
