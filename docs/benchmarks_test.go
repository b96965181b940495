package docs

import (
	"io/fs"
	"regexp"
	"testing"
)

// benchmarksMaxBytes keeps BENCHMARKS.md a reference a reader can scan: per
// area the current table with its command, machine, date and commit. Earlier
// runs are git's history of the file, so a new measurement replaces the
// area's table instead of adding a section.
const benchmarksMaxBytes = 40 << 10

// beforeSection finds a heading or paragraph that opens an earlier run: the
// lab-log form the file left.
var beforeSection = regexp.MustCompile(`(?m)^(#+ |\*\*)?Before[: ]`)

func TestBenchmarksIsAReference(t *testing.T) {
	data, err := fs.ReadFile(repo(t), "BENCHMARKS.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > benchmarksMaxBytes {
		t.Errorf("BENCHMARKS.md is %d bytes, over %d: keep each area's current table only (its history is git's)",
			len(data), benchmarksMaxBytes)
	}
	if loc := beforeSection.FindIndex(data); loc != nil {
		t.Errorf("BENCHMARKS.md has a \"Before\" section at byte %d: replace the area's table instead", loc[0])
	}
}
