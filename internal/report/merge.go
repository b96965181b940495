package report

import (
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/servermetrics"
)

// mergedStageNote replaces stages and waves in a merged record: both are
// read off a run's per-second timeline, which records do not carry. Routes
// and paired comparisons keep only headline figures, so they are not merged
// either.
const mergedStageNote = "a merged record has no stages, waves, route table or paired comparison: each instance found " +
	"its own on its share of the load (see its report); the figures above are the whole test's"

// Merge combines the run records of one test written by several k6 instances,
// each running one execution segment, into the record of the whole test:
// counts are summed exactly, distributions are merged sketch by sketch (so
// each quantile keeps the sketch's 1 % relative accuracy), and the random
// samples the baseline comparison resamples are drawn from each instance in
// proportion to the calls it saw. The whole test is then diagnosed like a
// run (DiagnoseRecord). It refuses records that are not parts of one test (another load shape, dataset,
// client, script or file: their fingerprints differ), and sets of segments
// that overlap or leave a part of the test out.
func Merge(records ...*runrecord.Record) (*runrecord.Record, error) {
	if len(records) == 0 {
		return nil, errors.New("report: merge: no run records given")
	}
	names, err := recordNames(records)
	if err != nil {
		return nil, err
	}
	if err := checkOneTest(records, names); err != nil {
		return nil, err
	}
	out := newMergedRecord(records[0])
	if out.Run != nil && unfingerprinted(records) {
		out.Run.Fingerprint = nil
	}
	for i, r := range records {
		if err := addInstance(out, names[i], r); err != nil {
			return nil, fmt.Errorf("report: merge: %s: %w", names[i], err)
		}
	}
	servers := make([][]servermetrics.View, len(records))
	for i, r := range records {
		servers[i] = r.Server
	}
	out.Server = servermetrics.Merge(servers...)
	if err := mergeSections(out, records, names); err != nil {
		return nil, err
	}
	out.Pareto = runrecord.ParetoPoints(out.Stages, out.Capacity) // from the merged windows, never an instance's
	finishCategories(out.Categories, records, func(r *runrecord.Record) map[string]*runrecord.CategoryRecord { return r.Categories })
	for name, cl := range out.Clients {
		finishCategories(cl.Categories, records, func(r *runrecord.Record) map[string]*runrecord.CategoryRecord {
			if c := r.Clients[name]; c != nil {
				return c.Categories
			}
			return nil
		})
	}
	// The whole test is diagnosed like a run, and gets what only the whole
	// test can show: the servers' counts against every instance's calls.
	out.Findings = append(append(out.Findings, DiagnoseRecord(out)...), mergedCountFindings(out)...)
	return out, nil
}

// recordNames names each record by the file it was read from, or by its
// place in the list, for the errors to say which one is wrong.
func recordNames(records []*runrecord.Record) ([]string, error) {
	names := make([]string, len(records))
	for i, r := range records {
		if r == nil {
			return nil, fmt.Errorf("report: merge: record %d is nil", i+1)
		}
		names[i] = r.Source
		if names[i] == "" {
			names[i] = fmt.Sprintf("record %d", i+1)
		}
	}
	return names, nil
}

// checkOneTest refuses records that are not the parts of one test: merged
// already, without run information, of another test (load shape, data sets,
// clients, or fingerprint: the script and files, k6's options) or segment
// sequence, or whose segments overlap or leave a part of the test out. A
// lone record without run information is its own whole; a record without a
// fingerprint is checked on the rest (MergeWarnings says so).
func checkOneTest(records []*runrecord.Record, names []string) error {
	first := records[0]
	segs := make([]segment, len(records))
	for i, r := range records {
		if r.Run == nil {
			if len(records) == 1 {
				break
			}
			return fmt.Errorf("report: merge: %s has no run information (written by an older version, or not by report()): "+
				"cannot check that it is a part of the same test", names[i])
		}
		if r.Instances != nil {
			return fmt.Errorf("report: merge: %s is already a merged record; merge the instances' own records", names[i])
		}
		s, err := parseSegment(r.Run.Segment)
		if err != nil {
			return fmt.Errorf("report: merge: %s: %w", names[i], err)
		}
		segs[i] = s
		if i == 0 {
			continue
		}
		d := runrecord.IdentityDifferences(first.Run, r.Run)
		d = append(d, runrecord.FingerprintDifferences(first.Run.Fingerprint, r.Run.Fingerprint)...)
		if len(d) > 0 {
			return fmt.Errorf("report: merge: %s and %s are not records of the same test: %s", names[0], names[i], strings.Join(d, "; "))
		}
		// A whole-test record has no sequence; the coverage check below says it overlaps.
		if a, b := first.Run.SegmentSequence, r.Run.SegmentSequence; a != b && first.Run.Segment != "" && r.Run.Segment != "" {
			return fmt.Errorf("report: merge: %s and %s were run with different execution segment sequences (%q vs %q)",
				names[0], names[i], a, b)
		}
	}
	if first.Run != nil {
		if err := checkCoverage(names, segs); err != nil {
			return fmt.Errorf("report: merge: %w", err)
		}
	}
	return nil
}

// newMergedRecord starts the whole test's record from its first part: the
// same run information, with no segment of its own.
func newMergedRecord(first *runrecord.Record) *runrecord.Record {
	out := &runrecord.Record{
		Format: runrecord.RecordFormat, Meta: maps.Clone(first.Meta), Start: first.Start, End: first.End,
		Categories: map[string]*runrecord.CategoryRecord{}, Findings: []runrecord.Finding{}, StageNote: mergedStageNote,
	}
	if first.Run != nil {
		run := *first.Run
		run.Segment = ""
		out.Run = &run
	}
	return out
}

// MergeWarnings are what a merge of these records could not check, one
// sentence each: a record of an older version has no fingerprint, so that
// the instances ran one script is taken on trust. Merge takes such records;
// the command prints these beside the merged report.
func MergeWarnings(records ...*runrecord.Record) []string {
	if len(records) < 2 {
		return nil
	}
	names, err := recordNames(records)
	if err != nil {
		return nil
	}
	var out []string
	for i, r := range records {
		if r.Run != nil && r.Run.Fingerprint == nil {
			out = append(out, names[i]+" has no test fingerprint (written by an older version): it was merged on its "+
				"load shape, data sets and clients alone; that it ran the same script and files could not be checked")
		}
	}
	return out
}

// unfingerprinted says whether any record lacks a fingerprint: the merged
// record then claims none, as it cannot say the whole is one test.
func unfingerprinted(records []*runrecord.Record) bool {
	for _, r := range records {
		if r.Run == nil || r.Run.Fingerprint == nil {
			return true
		}
	}
	return false
}

// addInstance adds one part's span, exclusions and categories (the whole
// test's and each client's) to the merged record, and lists the part.
func addInstance(out *runrecord.Record, name string, r *runrecord.Record) error {
	if r.Start.Before(out.Start) {
		out.Start = r.Start
	}
	if r.End.After(out.End) {
		out.End = r.End
	}
	inst := runrecord.InstanceRecord{Source: name, Start: r.Start, End: r.End, Findings: r.Findings}
	if r.Run != nil {
		inst.Segment = r.Run.Segment
	}
	if all := r.Categories[runrecord.AllCategories]; all != nil {
		inst.Requests = all.Requests
	}
	out.Instances = append(out.Instances, inst)
	out.Excluded = mergeExclusions(out.Excluded, r.Excluded)
	out.Interrupted = mergeInterruptions(out.Interrupted, r.Interrupted)
	if err := mergeCategories(out.Categories, r.Categories); err != nil {
		return err
	}
	for cname, cl := range r.Clients {
		if out.Clients == nil {
			out.Clients = map[string]*runrecord.ClientRecord{}
		}
		if out.Clients[cname] == nil {
			out.Clients[cname] = &runrecord.ClientRecord{Categories: map[string]*runrecord.CategoryRecord{}, StageNote: mergedStageNote}
		}
		if err := mergeCategories(out.Clients[cname].Categories, cl.Categories); err != nil {
			return fmt.Errorf("client %s: %w", cname, err)
		}
	}
	return nil
}

func mergeCategories(into, from map[string]*runrecord.CategoryRecord) error {
	for cat, cr := range from {
		if err := mergeCategory(into, cat, cr); err != nil {
			return fmt.Errorf("%s: %w", cat, err)
		}
	}
	return nil
}

func mergeCategory(into map[string]*runrecord.CategoryRecord, cat string, cr *runrecord.CategoryRecord) error {
	m := into[cat]
	if m == nil {
		m = &runrecord.CategoryRecord{Metrics: map[string]*runrecord.MetricRecord{}}
		into[cat] = m
	}
	m.Requests += cr.Requests
	m.Failures += cr.Failures
	m.Stalls += cr.Stalls
	m.OutputTokens += cr.OutputTokens
	m.CacheHits += cr.CacheHits
	m.CacheMisses += cr.CacheMisses
	m.Cost = m.Cost.Merge(cr.Cost)
	m.GapsUnsampled += cr.GapsUnsampled
	m.FinishOmitted += cr.FinishOmitted
	m.Slowest.Merge(cr.Slowest) // the k slowest of every instance
	if cr.Tallies != nil {
		if m.Tallies == nil {
			m.Tallies = &runrecord.Tallies{}
		}
		m.Tallies.Add(*cr.Tallies)
	}
	for k, v := range cr.Errors {
		if m.Errors == nil {
			m.Errors = map[string]uint64{}
		}
		m.Errors[k] += v
	}
	for name, mr := range cr.Metrics {
		if mr == nil || mr.Sketch == nil {
			continue
		}
		if have := m.Metrics[name]; have != nil {
			if err := have.Sketch.Merge(mr.Sketch); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		} else {
			m.Metrics[name] = &runrecord.MetricRecord{Sketch: mr.Sketch.Clone()}
		}
	}
	return nil
}

// finishCategories derives what cannot be summed: headline figures from the
// merged sketches, the cache hit rate from the summed counts, and the
// merged random sample. of picks the same map out of each instance's record.
func finishCategories(cats map[string]*runrecord.CategoryRecord, records []*runrecord.Record, of func(*runrecord.Record) map[string]*runrecord.CategoryRecord) {
	for cat, m := range cats {
		parts := make([]*runrecord.CategoryRecord, 0, len(records))
		for _, r := range records {
			if cr := of(r)[cat]; cr != nil {
				parts = append(parts, cr)
			}
		}
		finishCategory(cat, m, parts)
	}
}

func finishCategory(cat string, m *runrecord.CategoryRecord, parts []*runrecord.CategoryRecord) {
	for name, mr := range m.Metrics {
		if metric, ok := record.DistByName(name); ok {
			m.Metrics[name] = metricRecordOf(metric, mr.Sketch)
		} else {
			m.Metrics[name] = metricRecord(mr.Sketch)
		}
	}
	if m.CacheHits+m.CacheMisses > 0 {
		hr := float64(m.CacheHits) / float64(m.CacheHits+m.CacheMisses)
		m.CacheHitRate = &hr
	}
	m.Samples, m.SamplesSeen = mergeSamples(cat, parts)
}

// mergeSamples draws, per metric, a sample of the union. When every
// instance kept all its calls the union is simply all of them. Otherwise each
// instance's sample is uniform over its calls, so taking from each a share
// proportional to the calls it saw gives a uniform sample of all calls, of the
// size a single run keeps (the largest full sample). The draw is seeded by
// the category and metric, so the same records always merge to the same file.
func mergeSamples(cat string, parts []*runrecord.CategoryRecord) (map[string][]float64, uint64) {
	var seen uint64
	size := 0 // 0: nobody had to sample
	for _, p := range parts {
		seen += p.SamplesSeen
		kept := 0
		for _, vs := range p.Samples {
			kept = max(kept, len(vs))
		}
		if uint64(kept) < p.SamplesSeen {
			size = max(size, kept)
		}
	}
	if seen == 0 {
		return nil, 0
	}
	out := map[string][]float64{}
	for _, m := range record.SampledDists {
		name := m.String()
		h := fnv.New64a()
		_, _ = h.Write([]byte(cat + "/" + name))
		rng := rand.New(rand.NewPCG(1, h.Sum64())) // #nosec G404 -- a seeded, reproducible resample: not a secret
		var merged []float64
		for _, p := range parts {
			vs := p.Samples[name]
			k := len(vs)
			if size > 0 {
				k = min(k, int(float64(size)*float64(p.SamplesSeen)/float64(seen)+0.5))
			}
			for _, j := range rng.Perm(len(vs))[:k] {
				merged = append(merged, vs[j])
			}
		}
		if len(merged) > 0 {
			out[name] = merged
		}
	}
	return out, seen
}

// mergeInterruptions: the test was interrupted when an instance was; the
// first stop is its stop, and the calls cut in flight are every
// instance's.
func mergeInterruptions(a, b *runrecord.Interruption) *runrecord.Interruption {
	switch {
	case b == nil:
		return a
	case a == nil:
		c := *b
		return &c
	}
	canceled := a.Canceled + b.Canceled
	if b.At.Before(a.At) {
		*a = *b
	}
	a.Canceled = canceled
	return a
}

func mergeExclusions(a, b *runrecord.Exclusions) *runrecord.Exclusions {
	if b == nil {
		return a
	}
	if a == nil {
		c := *b
		c.ByReason = maps.Clone(b.ByReason)
		return &c
	}
	a.Calls += b.Calls
	a.Reach.Add(b.Reach)
	for k, v := range b.ByReason {
		if a.ByReason == nil {
			a.ByReason = map[string]uint64{}
		}
		a.ByReason[k] += v
	}
	if b.IncludedFrom.After(a.IncludedFrom) {
		a.IncludedFrom = b.IncludedFrom
	}
	return a
}

// sortedCategories lists a record's categories, "all" last.
func sortedCategories(rec *runrecord.Record) []string {
	cats := slices.Collect(maps.Keys(rec.Categories))
	sort.Strings(cats)
	if i := slices.Index(cats, runrecord.AllCategories); i >= 0 {
		cats = append(slices.Delete(cats, i, i+1), runrecord.AllCategories)
	}
	return cats
}
