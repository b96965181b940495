package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/llmstream/xk6-llmstream/internal/report/compare"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
)

func metricRecord(s *sketch.Sketch) *runrecord.MetricRecord {
	return &runrecord.MetricRecord{
		Count: s.Count(), Mean: s.Mean(), P50: s.Quantile(0.5), P95: s.Quantile(0.95), P99: s.Quantile(0.99),
		Min: s.Min, Max: s.Max, Sketch: s,
	}
}

// NewRecord builds the record of a run.
func NewRecord(r *Run, findings []runrecord.Finding, cmp *runrecord.Comparison, meta map[string]any) *runrecord.Record {
	if findings == nil {
		findings = []runrecord.Finding{}
	}
	rec := &runrecord.Record{
		Format: runrecord.RecordFormat, Meta: meta, Start: r.First, End: r.Last,
		Categories: map[string]*runrecord.CategoryRecord{}, Findings: findings, Comparison: cmp, Seed: r.opt.Seed,
	}
	rec.Clients, rec.Routes, rec.Paired = clientRecords(r), routeRecords(r), r.Paired()
	if ex := r.Excluded; ex.Summary() != "" {
		rec.Excluded = &ex
	}
	for _, cat := range append(r.Categories(), runrecord.AllCategories) {
		rec.Categories[cat] = categoryRecordOf(r, cat)
	}
	if !r.PerClient() { // with several clients, stages and waves are per client only
		rec.Stages, rec.StageNote, rec.Waves = stageRecords(r), r.StageNote(), waveRecords(r)
	}
	return rec
}

// categoryRecordOf is the record of a category of a run (or of one client's
// view of it), with the raw samples a later comparison resamples.
func categoryRecordOf(r *Run, cat string) *runrecord.CategoryRecord {
	cr := categoryRecord(r.Category(cat))
	if cat != runrecord.AllCategories && len(r.samples[cat]) > 0 {
		cr.Samples = map[string][]float64{}
		for _, m := range runrecord.SampledMetrics {
			if v := samplesOf(r.samples[cat], m); len(v) > 0 {
				cr.Samples[m.String()] = v
			}
		}
		cr.SamplesSeen = r.seen[cat]
	}
	return cr
}

// categoryRecord is the record of one group's figures.
func categoryRecord(g *Group) *runrecord.CategoryRecord {
	tallies := g.Tallies
	cr := &runrecord.CategoryRecord{
		Requests: g.Requests, Failures: g.Failures, Errors: g.Errors, Stalls: g.Stalls,
		CacheHits: g.CacheHit, CacheMisses: g.CacheMiss,
		OutputTokens: g.OutputTokens, Metrics: map[string]*runrecord.MetricRecord{}, Cost: g.costRecord(),
		GapsUnsampled: g.GapsUnsampled, FinishOmitted: g.FinishOmitted, Tallies: &tallies,
	}
	if hr := g.CacheHitRate(); !math.IsNaN(hr) {
		cr.CacheHitRate = &hr
	}
	for m, s := range g.Sketches {
		if s.Count() > 0 {
			cr.Metrics[runrecord.Metric(m).String()] = metricRecord(s)
		}
	}
	return cr
}

// MarshalRecord renders the run record as indented JSON.
func MarshalRecord(r *Run, findings []runrecord.Finding, cmp *runrecord.Comparison, meta map[string]any) ([]byte, error) {
	if r == nil {
		return nil, errors.New("report: no run to record")
	}
	return marshalRecord(r, findings, cmp, RenderOptions{Meta: meta})
}

func marshalRecord(r *Run, findings []runrecord.Finding, cmp *runrecord.Comparison, opt RenderOptions) ([]byte, error) {
	rec, err := runRecord(r, findings, cmp, opt)
	if err != nil {
		return nil, err
	}
	return encodeRecord(rec)
}

// runRecord is the record of a run as Render writes it: how it was made, the
// servers' view, and the comparison with opt.Baseline unless cmp is given.
func runRecord(r *Run, findings []runrecord.Finding, cmp *runrecord.Comparison, opt RenderOptions) (*runrecord.Record, error) {
	if r == nil {
		return nil, errors.New("report: no run to record")
	}
	rec := NewRecord(r, findings, nil, opt.Meta)
	rec.Run = opt.Info
	rec.Server = opt.Server
	rec.Dispatch = r.Dispatch
	rec.Capacity = r.Capacity
	rec.Retrieval, rec.Images = retrievalRecords(r.Retrieval), imageRecords(r.Images)
	rec.Conversations = conversationRecord(r.Turns, r.Jobs, r.JobStages(), "")
	if cmp == nil {
		cmp = compare.Records(rec, opt.Baseline)
	}
	rec.Comparison = cmp
	return rec, nil
}

func encodeRecord(rec *runrecord.Record) ([]byte, error) {
	b, err := json.MarshalIndent(rec, "", " ")
	if err != nil {
		return nil, fmt.Errorf("report: encoding the run record: %w", err)
	}
	return b, nil
}
