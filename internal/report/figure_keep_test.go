package report

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// TestEveryTallyARowNamesIsInTheRecord: a row's Keep.Tally is a JSON key of a
// category record or of its tallies, so what the table says the report counts
// is what a record holds.
func TestEveryTallyARowNamesIsInTheRecord(t *testing.T) {
	keys := map[string]bool{}
	for _, v := range []any{runrecord.CategoryRecord{}, runrecord.Tallies{}} {
		rt := reflect.TypeOf(v)
		for i := range rt.NumField() {
			keys[strings.Split(rt.Field(i).Tag.Get("json"), ",")[0]] = true
		}
	}
	named := 0
	for _, f := range record.Figures {
		if n := f.Keep.Tally; n != "" {
			require.Truef(t, keys[n], "the row %s%s names the tally %q, which the record has not", f.Key, f.Metric, n)
			named++
		}
	}
	require.NotZero(t, named)
}

// TestEveryDistributionIsInTheRecord: a run's record has a metric for every
// distribution a call measured, under the row's name.
func TestEveryDistributionIsInTheRecord(t *testing.T) {
	c := NewCollector(Options{Start: t0})
	for _, o := range (synth{seed: 4, stages: []synthStage{{4, 20}}, connectMS: 20, eventLagMS: 3, clientLagMS: 2, hitRate: 0.5,
		sharedPrefix: true}).observations() {
		o.LastOutAt = o.End.Add(-2 * time.Millisecond) // the terminal event 2 ms after the last token
		c.Add(o)
	}
	run := c.Snapshot()
	cr := NewRecord(run, nil, nil, nil).Categories[runrecord.AllCategories]
	for _, d := range record.Dists {
		switch d {
		case record.DistDispatchDelay, record.DistTTFTFromDue, record.DistE2EFromDue:
			require.NotContains(t, cr.Metrics, d.String(), "no call had a due time")
		default:
			require.Containsf(t, cr.Metrics, d.String(), "the record's metrics lack %s", d)
			require.Equalf(t, run.Category(runrecord.AllCategories).S(d).Count(), cr.Metrics[d.String()].Count, "%s", d)
		}
	}
}
