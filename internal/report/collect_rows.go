package report

import "github.com/llmstream/xk6-llmstream/internal/record"

// The figure table's rows the collectors read for every call, looked up
// once: record.Dist.Row finds a row by its name in a map, and a call's way
// through the collectors took some fifteen such lookups.
//
//nolint:gochecknoglobals // derived once from the read-only table
var (
	rowTTFT         = record.DistTTFT.Row()
	rowE2E          = record.DistE2E.Row()
	rowTPOT         = record.DistTPOT.Row()
	rowTokensPerSec = record.DistTokensPerSec.Row()
	rowGap          = record.DistGap.Row()
	// gapPlace is the gaps' place in a group's Sketches.
	gapPlace = record.DistGap.Index()
)

// keptRows are the figure table's rows of record.Dists, in its order.
var keptRows = func() []*record.Figure[record.Call] { //nolint:gochecknoglobals // derived once from the table
	out := make([]*record.Figure[record.Call], len(record.Dists))
	for i, d := range record.Dists {
		out[i] = d.Row()
	}
	return out
}()
