package report

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// fingerprinted is a record of the test whose script has the digest script
// (the other parts the same), for segment seg.
func fingerprinted(t *testing.T, name, seg, script string, parts []*Run) *runrecord.Record {
	t.Helper()
	info := testInfo(seg)
	if script != "" {
		fp := &runrecord.Fingerprint{Files: map[string]string{"test.js": script, "prompts.json": "p1"}, Options: "o1",
			Clients: map[string]string{"chat": "c1"}, Datasets: "d1"}
		fp.Digest = "all-" + script
		info.Fingerprint = fp
	}
	return recordThrough(t, name, parts[0], info)
}

// Two tests whose scenarios and clients match (the case: other
// prompts and max_tokens in the script, run seconds apart) are not merged,
// and the error says what differs.
func TestMergeRefusesRecordsOfDifferentTests(t *testing.T) {
	_, parts, _ := splitRun(2)
	a := fingerprinted(t, "a.json", "0:1/2", "s1", parts)
	b := fingerprinted(t, "b.json", "1/2:1", "s2", parts)
	require.Empty(t, runrecord.IdentityDifferences(a.Run, b.Run), "the load shape, data sets and clients look alike")
	_, err := Merge(a, b)
	require.EqualError(t, err, "report: merge: a.json and b.json are not records of the same test: file test.js differs (s1 vs s2)")

	same := fingerprinted(t, "c.json", "1/2:1", "s1", parts)
	m, err := Merge(a, same)
	require.NoError(t, err, "instances of one test: other segments, one fingerprint")
	require.NotNil(t, m.Run.Fingerprint)
	assert.Equal(t, "all-s1", m.Run.Fingerprint.Digest, "the merged record is of that test")
	assert.Empty(t, MergeWarnings(a, same))
}

// A record of an older version has no fingerprint: it merges on what can be
// checked, with a warning naming it, and the merged record claims no
// fingerprint.
func TestMergeWarnsOfARecordWithoutFingerprint(t *testing.T) {
	_, parts, _ := splitRun(2)
	a := fingerprinted(t, "a.json", "0:1/2", "s1", parts)
	old := fingerprinted(t, "old.json", "1/2:1", "", parts)
	m, err := Merge(a, old)
	require.NoError(t, err)
	assert.Nil(t, m.Run.Fingerprint, "the whole cannot say it is one test")
	assert.Equal(t, []string{"old.json has no test fingerprint (written by an older version): it was merged on its " +
		"load shape, data sets and clients alone; that it ran the same script and files could not be checked"}, MergeWarnings(a, old))
}
