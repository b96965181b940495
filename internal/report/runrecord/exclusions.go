package runrecord

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Exclusions is what the report left out: the rules in force, and how many
// calls each rule took out.
type Exclusions struct {
	Warmup       string            `json:"warmup,omitempty"`
	Scenarios    []string          `json:"scenarios,omitempty"`
	Tags         map[string]string `json:"tags,omitempty"`
	SetupKept    bool              `json:"setup_teardown_kept,omitempty"`
	Calls        uint64            `json:"calls"`
	ByReason     map[string]uint64 `json:"by_reason,omitempty"`
	IncludedFrom time.Time         `json:"included_from,omitzero"` // end of the warm-up window
	// Reach is the left-out calls' requests by whether they reached the
	// server: its count holds them too.
	Reach ServerReach `json:"server_reach,omitzero"`
}

// Summary is one line for the text report ("" when nothing was left out).
func (e Exclusions) Summary() string {
	if e.Calls == 0 && e.Warmup == "" && len(e.Scenarios) == 0 && len(e.Tags) == 0 {
		return ""
	}
	reasons := make([]string, 0, len(e.ByReason))
	for r, n := range e.ByReason {
		label := r
		if r == "warm-up window" {
			label = "warm-up window " + e.Warmup
		}
		reasons = append(reasons, fmt.Sprintf("%s: %d", label, n))
	}
	sort.Strings(reasons)
	if len(reasons) == 0 {
		reasons = append(reasons, "no call matched the rules")
	}
	return fmt.Sprintf("left out of this report: %d calls (%s)", e.Calls, strings.Join(reasons, ", "))
}
