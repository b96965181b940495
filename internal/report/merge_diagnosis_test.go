package report

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// The rules that read the run's per-second timeline, its load stages or its
// per-call samples: a record keeps none of them, so only each instance's own
// report has these.
var timelineRules = []string{"drift", "head_of_line", "queue_bound", "decode_saturated", "knee", "length_variance"}

func findingKeys(fs []runrecord.Finding) []string {
	var out []string
	for _, f := range fs {
		if !slices.Contains(timelineRules, f.ID) {
			out = append(out, fmt.Sprintf("%s/%s: %s %q %v", f.Client, f.ID, f.Title, f.Evidence, f.Values))
		}
	}
	slices.Sort(out)
	return out
}

// TestMergedRunIsDiagnosedLikeTheWholeRun: three instances' records merged
// get the findings the whole run got, per client, quoting the same figures
// (the whole test's), though no instance saw the whole test.
func TestMergedRunIsDiagnosedLikeTheWholeRun(t *testing.T) {
	whole, parts, _ := splitRun(3)
	segs := []string{"0:1/3", "1/3:2/3", "2/3:1"}
	recs := make([]*runrecord.Record, len(parts))
	for i, p := range parts {
		recs[i] = recordThrough(t, segs[i]+".json", p, testInfo(segs[i]))
	}
	merged, err := Merge(recs...)
	require.NoError(t, err)
	want := findingKeys(Diagnose(whole))
	require.NotEmpty(t, want, "the synthetic run (5 % stalls) must give the record's rules something to find")
	require.Equal(t, want, findingKeys(merged.Findings))

	// Through the merged record's JSON, as `llmstream merge` writes it and a
	// later merge or comparison reads it.
	b, _, err := encodeRecord(merged)
	require.NoError(t, err)
	back, err := runrecord.ParseRecord("merged.json", b)
	require.NoError(t, err)
	require.Equal(t, want, findingKeys(DiagnoseRecord(back)))
	require.Contains(t, RenderRecordText(merged), "["+merged.Findings[0].ID+"]")
}
