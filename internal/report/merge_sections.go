package report

import (
	"errors"
	"fmt"
	"sort"

	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
)

// The merge of the run record's sections beside the categories: the
// dispatch account, the embed and rerank groups, TTFT by images and the
// conversations. As for the categories, counts are summed and every
// distribution is merged sketch by sketch, never averaged; a record without
// a section adds nothing to it.

// mergeSections gives the merged record the sections of its parts.
func mergeSections(out *runrecord.Record, records []*runrecord.Record, names []string) error {
	for i, r := range records {
		out.Dispatch = mergeDispatch(out.Dispatch, r.Dispatch)
		if err := checkSectionSketches(r); err != nil {
			return fmt.Errorf("report: merge: %s: %w", names[i], err)
		}
	}
	var err error
	if out.Retrieval, err = mergeRetrieval(records); err != nil {
		return fmt.Errorf("report: merge: retrieval: %w", err)
	}
	if out.Images, err = mergeImages(records); err != nil {
		return fmt.Errorf("report: merge: images: %w", err)
	}
	if out.Conversations, err = mergeConversations(records); err != nil {
		return fmt.Errorf("report: merge: conversations: %w", err)
	}
	caps := make([]*runrecord.Capacity, len(records))
	for i, r := range records {
		caps[i] = r.Capacity
	}
	if out.Capacity, err = MergeCapacity(names, caps); err != nil {
		return fmt.Errorf("report: merge: %w", err)
	}
	out.Precision = mergePrecision(records)
	return nil
}

// checkSectionSketches refuses a section distribution without its sketch: its
// percentiles alone cannot be merged.
func checkSectionSketches(r *runrecord.Record) error {
	check := func(what string, mr *runrecord.MetricRecord) error {
		if mr == nil || mr.Sketch == nil {
			return fmt.Errorf("%s has no sketch: its percentiles cannot be merged", what)
		}
		return mr.Sketch.Validate()
	}
	var errs []error
	for _, g := range r.Retrieval {
		for name, mr := range g.Metrics {
			errs = append(errs, check(fmt.Sprintf("retrieval %s/%s %s", g.Op, g.Category, name), mr))
		}
	}
	for _, g := range r.Images {
		errs = append(errs, check(fmt.Sprintf("images %d %s ttft", g.Images, g.Size), g.TTFT))
	}
	if c := r.Conversations; c != nil {
		for _, g := range c.Turns {
			errs = append(errs, check(fmt.Sprintf("conversations turn %d %s ttft", g.Turn, g.Cache), g.TTFT))
		}
		for _, g := range c.Jobs {
			errs = append(errs, check(fmt.Sprintf("conversations job %s/%s duration", g.Kind, g.Category), g.Duration))
		}
	}
	return errors.Join(errs...)
}

// mergeDispatch adds one part's dispatch account: each schedule's credits
// (claimed, late, dropped) summed by name, its worst lag the largest, and k6's
// dropped iterations summed. A trace summary and its predicted prefix reuse
// are kept when every part says the same; parts replaying different shares
// of a trace say different things, and the reuse of the whole cannot be
// recomputed from the parts' shares, so it is then unknown.
func mergeDispatch(a, b *runrecord.Dispatch) *runrecord.Dispatch {
	if b == nil {
		return a
	}
	if a == nil {
		a = &runrecord.Dispatch{}
	}
	for _, s := range b.Schedules {
		i := -1
		for j := range a.Schedules {
			if a.Schedules[j].Name == s.Name && a.Schedules[j].Kind == s.Kind {
				i = j
			}
		}
		if i < 0 {
			a.Schedules = append(a.Schedules, s)
			continue
		}
		m := &a.Schedules[i]
		m.Claimed += s.Claimed
		m.Late += s.Late
		m.Dropped += s.Dropped
		m.MaxLagMS = max(m.MaxLagMS, s.MaxLagMS)
		if m.Trace != s.Trace {
			m.Trace = "trace replayed in shares: see each instance's record"
		}
		if m.PrefixReuse != nil && (s.PrefixReuse == nil || *s.PrefixReuse != *m.PrefixReuse) {
			m.PrefixReuse = nil
		}
	}
	if b.K6Dropped != nil {
		v := *b.K6Dropped
		if a.K6Dropped != nil {
			v += *a.K6Dropped
		}
		a.K6Dropped = &v
	}
	a.K6Shortfall = mergeShortfall(a.K6Shortfall, b.K6Shortfall)
	return a
}

// mergeShortfall sums the VUs the instances that dropped iterations had and
// needed: offered rates add, and the mean iteration is weighted by each
// instance's offered rate, so NeededVUs stays Little's law over the union.
func mergeShortfall(a, b *runrecord.VUShortfall) *runrecord.VUShortfall {
	if b == nil {
		return a
	}
	if a == nil {
		c := *b
		return &c
	}
	rate := a.OfferedRate + b.OfferedRate
	iter := a.IterationSec
	if rate > 0 {
		iter = (a.OfferedRate*a.IterationSec + b.OfferedRate*b.IterationSec) / rate
	}
	return &runrecord.VUShortfall{VUsMax: a.VUsMax + b.VUsMax, OfferedRate: rate, IterationSec: iter, NeededVUs: a.NeededVUs + b.NeededVUs}
}

// retrievalKey of a merged group: an operation's calls of one category at
// one load stage. Each instance ran its share of each stage's load, so the
// instances' groups of one operation and category are matched by their rank
// in load (the k-th stage of one is the k-th of another) and their loads
// summed. When the instances saw different numbers of stages, the rank is
// ambiguous and the operation's groups merge into one row whose load is the
// sum of each instance's call-weighted mean load.
type retrievalRank struct {
	Op, Category string
	Rank         int
}

func mergeRetrieval(records []*runrecord.Record) ([]runrecord.RetrievalRecord, error) {
	stages := map[[2]string]int{} // op/category → its number of stages, -1 when instances differ
	for _, r := range records {
		n := map[[2]string]int{}
		for _, g := range r.Retrieval {
			n[[2]string{g.Op, g.Category}]++
		}
		for k, v := range n {
			if have, ok := stages[k]; ok && have != v {
				stages[k] = -1
			} else if !ok {
				stages[k] = v
			}
		}
	}
	merged := map[retrievalRank]*retrievalMerge{}
	for _, r := range records {
		groups := append([]runrecord.RetrievalRecord(nil), r.Retrieval...)
		sort.SliceStable(groups, func(i, j int) bool { return groups[i].Load < groups[j].Load })
		rank := map[[2]string]int{}
		for _, g := range groups {
			k := [2]string{g.Op, g.Category}
			key := retrievalRank{Op: g.Op, Category: g.Category, Rank: rank[k]}
			if stages[k] < 0 {
				key.Rank = 0
			} else {
				rank[k]++
			}
			m := merged[key]
			if m == nil {
				m = &retrievalMerge{rec: runrecord.RetrievalRecord{Op: g.Op, Category: g.Category, ByRate: g.ByRate, Metrics: map[string]*runrecord.MetricRecord{}}}
				merged[key] = m
			}
			if err := m.add(r, g); err != nil {
				return nil, fmt.Errorf("%s/%s: %w", g.Op, g.Category, err)
			}
		}
	}
	keys := make([]retrievalRank, 0, len(merged))
	for k := range merged {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.Op != b.Op {
			return a.Op < b.Op
		}
		if a.Category != b.Category {
			return a.Category < b.Category
		}
		return a.Rank < b.Rank
	})
	var out []runrecord.RetrievalRecord
	for _, k := range keys {
		out = append(out, merged[k].finish())
	}
	return out, nil
}

// retrievalMerge gathers one merged group; loads are summed per instance
// (each instance's call-weighted mean when several of its groups share it).
type retrievalMerge struct {
	rec       runrecord.RetrievalRecord
	loadCalls map[*runrecord.Record][2]float64 // instance → (Σ load×calls, Σ calls)
	items     float64
	tps       *float64
}

func (m *retrievalMerge) add(r *runrecord.Record, g runrecord.RetrievalRecord) error {
	if m.loadCalls == nil {
		m.loadCalls = map[*runrecord.Record][2]float64{}
	}
	lc := m.loadCalls[r]
	m.loadCalls[r] = [2]float64{lc[0] + g.Load*float64(g.Calls), lc[1] + float64(g.Calls)}
	m.rec.Calls += g.Calls
	m.rec.Failed += g.Failed
	m.rec.InputTokens += g.InputTokens
	m.rec.RequestBytes += g.RequestBytes
	for k, v := range g.Errors {
		if m.rec.Errors == nil {
			m.rec.Errors = map[string]uint64{}
		}
		m.rec.Errors[k] += v
	}
	if g.BatchMean != nil {
		m.items += *g.BatchMean * float64(g.Calls-g.Failed)
	}
	if g.InputTokensPerSec != nil { // the instances ran at once: their rates add
		v := *g.InputTokensPerSec
		if m.tps != nil {
			v += *m.tps
		}
		m.tps = &v
	}
	for name, mr := range g.Metrics {
		have := m.rec.Metrics[name]
		var s *sketch.Sketch
		if have != nil {
			s = have.Sketch
		}
		if err := mergeSketch(&s, mr.Sketch); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		m.rec.Metrics[name] = &runrecord.MetricRecord{Sketch: s}
	}
	return nil
}

func (m *retrievalMerge) finish() runrecord.RetrievalRecord {
	rec := m.rec
	for _, lc := range m.loadCalls {
		if lc[1] > 0 {
			rec.Load += lc[0] / lc[1]
		}
	}
	for name, mr := range rec.Metrics {
		rec.Metrics[name] = metricRecord(mr.Sketch)
	}
	if ok := rec.Calls - rec.Failed; ok > 0 && m.items > 0 {
		v := m.items / float64(ok)
		rec.BatchMean = &v
	}
	rec.InputTokensPerSec = m.tps
	return rec
}

// mergeImages merges the groups of TTFT by images by image count and size.
// An instance whose prompts had no images has no section, yet its answered
// calls belong in the row of prompts without images: that row takes them
// from its chat calls' TTFT (the same answered calls the section counts).
func mergeImages(records []*runrecord.Record) ([]runrecord.ImageRecord, error) {
	withImages := false
	for _, r := range records {
		withImages = withImages || len(r.Images) > 0
	}
	if !withImages {
		return nil, nil
	}
	type key struct {
		Images int
		Size   string
	}
	groups := map[key]*ImageGroup{}
	add := func(k key, calls uint64, bytes int64, s *sketch.Sketch) error {
		g := groups[k]
		if g == nil {
			g = &ImageGroup{Images: k.Images, Size: k.Size}
			groups[k] = g
		}
		g.Calls += calls
		g.Bytes += bytes
		return mergeSketch(&g.TTFT, s)
	}
	for _, r := range records {
		if len(r.Images) == 0 {
			if all := r.Categories[runrecord.AllCategories]; all != nil {
				if mr := all.Metrics[record.DistTTFT.String()]; mr != nil && mr.Sketch != nil && mr.Count > 0 {
					if err := add(key{}, mr.Count, 0, mr.Sketch); err != nil {
						return nil, err
					}
				}
			}
			continue
		}
		for _, g := range r.Images {
			if err := add(key{g.Images, g.Size}, g.Calls, g.Bytes, g.TTFT.Sketch); err != nil {
				return nil, fmt.Errorf("%d %s: %w", g.Images, g.Size, err)
			}
		}
	}
	out := make([]*ImageGroup, 0, len(groups))
	for _, g := range groups {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Images != out[j].Images {
			return out[i].Images < out[j].Images
		}
		return imageSizeRank(out[i].Size) < imageSizeRank(out[j].Size)
	})
	return imageRecords(out), nil
}

func imageSizeRank(name string) int {
	for i, s := range imageSizes {
		if s.name == name {
			return i
		}
	}
	return -1
}
