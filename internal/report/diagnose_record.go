package report

import (
	"maps"

	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// DiagnoseRecord applies the diagnosis to a run record, a merged one above
// all: the record keeps each category's distributions and exact counters
// (runrecord.Tallies), so every rule that reads a group's figures speaks on
// the record as it would on the run. The rules that read the run's
// per-second timeline or its load stages (drift, head-of-line blocking, the
// load shape, the knee) find nothing in a record, which keeps neither: each
// instance's own report has them.
func DiagnoseRecord(rec *runrecord.Record) []runrecord.Finding {
	if rec == nil {
		return nil
	}
	return Diagnose(runOfRecord(rec))
}

// runOfRecord is a run rebuilt from a record: a group per category (per
// client and category when the record kept clients apart), the dispatch
// account, and no timeline, load levels or samples. Its counts already hold
// the dropped credits, so none are added again.
func runOfRecord(rec *runrecord.Record) *Run {
	r := &Run{opt: Options{}.withDefaults(), groups: map[groupKey]*Group{}, First: rec.Start, Last: rec.End,
		Timeline: newTimeline(rec.Start, 1), Dispatch: rec.Dispatch}
	if rec.Excluded != nil {
		r.Excluded = *rec.Excluded
	}
	if len(rec.Clients) < 2 {
		addRecordGroups(r, "", rec.Categories)
		return r
	}
	r.parts = map[string]*Run{}
	for name, cl := range rec.Clients {
		v := &Run{opt: r.opt, groups: map[groupKey]*Group{}, First: rec.Start, Last: rec.End,
			Timeline: newTimeline(rec.Start, 1), Dispatch: rec.Dispatch, client: name}
		addRecordGroups(v, name, cl.Categories)
		maps.Copy(r.groups, v.groups)
		r.parts[name] = v
	}
	return r
}

// addRecordGroups adds a group per category of cats (not the total, which
// Category adds up) to r, as client's.
func addRecordGroups(r *Run, client string, cats map[string]*runrecord.CategoryRecord) {
	for cat, cr := range cats {
		if cat == runrecord.AllCategories || cr == nil {
			continue
		}
		r.groups[groupKey{Client: client, Category: cat}] = groupOfRecord(cr)
	}
}

// groupOfRecord is a group with a category record's figures.
func groupOfRecord(cr *runrecord.CategoryRecord) *Group {
	g := newGroup()
	g.Requests, g.Failures, g.FinishOmitted = cr.Requests, cr.Failures, cr.FinishOmitted
	maps.Copy(g.Errors, cr.Errors)
	g.CacheHit, g.CacheMiss, g.Stalls = cr.CacheHits, cr.CacheMisses, cr.Stalls
	g.GapsUnsampled, g.OutputTokens = cr.GapsUnsampled, cr.OutputTokens
	if cr.Tallies != nil {
		g.Tallies = *cr.Tallies
	}
	g.Slowest.Merge(cr.Slowest) // re-bounded and re-sorted, whatever the file held
	if c := cr.Cost; c != nil {
		g.Cost = runrecord.Cost{Calls: c.Calls, Total: c.Total, Saved: c.SavedByCache, Currency: c.Currency}
	}
	for name, mr := range cr.Metrics {
		if m, ok := record.DistByName(name); ok && mr != nil && mr.Sketch != nil {
			_ = g.S(m).Merge(mr.Sketch) // a record's sketches are sketch.FineAlpha, as the group's
		}
	}
	return g
}
