package report

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/compare"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
	"github.com/llmstream/xk6-llmstream/internal/servermetrics"
)

func metricRecord(s *sketch.Sketch) *runrecord.MetricRecord {
	return (&runrecord.MetricRecord{
		Count: s.Count(), Mean: s.Mean(), P50: s.Quantile(0.5), P95: s.Quantile(0.95), P99: s.Quantile(0.99),
		Min: s.Min, Max: s.Max, Sketch: s,
	}).WithIntervals()
}

// metricRecordOf is the record of a group's distribution d: without
// intervals for a figure of many values per call (perCall).
func metricRecordOf(d record.Dist, s *sketch.Sketch) *runrecord.MetricRecord {
	mr := metricRecord(s)
	if !perCall(d) {
		mr.P50CI, mr.P95CI, mr.P99CI, mr.TooFew = nil, nil, nil, nil
	}
	return mr
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
	rec.Interrupted = r.Interruption()
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
		for _, m := range record.SampledDists {
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
		Slowest: g.Slowest.Clone(),
	}
	if hr := g.CacheHitRate(); !math.IsNaN(hr) {
		cr.CacheHitRate = &hr
	}
	for m, s := range g.Sketches {
		if s.Count() > 0 {
			cr.Metrics[record.Dists[m].String()] = metricRecordOf(record.Dists[m], s)
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
	b, _, err := encodeRecord(rec)
	return b, err
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
	rec.Pareto = runrecord.ParetoPoints(rec.Stages, rec.Capacity)
	rec.Precision = r.Precision
	rec.Retrieval, rec.Images = retrievalRecords(r.Retrieval), imageRecords(r.Images)
	rec.Conversations = conversationRecord(r.Turns, r.Jobs, r.JobStages(), "")
	if cmp == nil {
		cmp = compare.Records(rec, baselineOf(opt))
	}
	rec.Comparison = cmp
	return rec, nil
}

// baselineOf is the record a run is compared with: opt.Baseline, its server
// view replaced by opt.BaselineServer when one is given (alone, a baseline
// of the servers' figures only).
func baselineOf(opt RenderOptions) *runrecord.Record {
	if opt.BaselineServer == nil {
		return opt.Baseline
	}
	base := runrecord.Record{}
	if opt.Baseline != nil {
		base = *opt.Baseline
	}
	base.Server = opt.BaselineServer
	return &base
}

// encodeRecord writes the record; numbers that were not finite are written
// as null and their places returned (runrecord.Encode), so one bad number
// never loses the record.
func encodeRecord(rec *runrecord.Record) ([]byte, []string, error) {
	b, nonFinite, err := runrecord.Encode(rec)
	if err != nil {
		return nil, nil, fmt.Errorf("report: %w", err)
	}
	return b, nonFinite, nil
}

func (g *Group) costRecord() *runrecord.CostRecord {
	c := g.Cost
	if c.Calls == 0 {
		return nil
	}
	return &runrecord.CostRecord{Currency: c.Currency, Calls: c.Calls, Total: c.Total, Per1000Calls: c.Per1000(), SavedByCache: c.Saved}
}

func retrievalRecords(groups []*RetrievalGroup) []runrecord.RetrievalRecord {
	out := make([]runrecord.RetrievalRecord, 0, len(groups))
	for _, g := range groups {
		rr := runrecord.RetrievalRecord{Op: g.Op, Category: g.Category, Load: g.Level, ByRate: g.ByRate, Calls: g.Calls,
			Failed: g.Failed, InputTokens: g.InputTokens, RequestBytes: g.RequestBytes, Metrics: map[string]*runrecord.MetricRecord{}}
		if len(g.errors) > 0 {
			rr.Errors = g.errors
		}
		for name, s := range map[string]*sketch.Sketch{"duration": g.Duration, "ttfb": g.TTFB, "parse": g.Parse,
			"dispatch_delay": g.DispatchDelay, "e2e_from_due": g.E2EFromDue} {
			if s.Count() > 0 {
				rr.Metrics[name] = metricRecord(s)
			}
		}
		if ok := g.Calls - g.Failed; ok > 0 {
			m := float64(g.Items) / float64(ok)
			rr.BatchMean = &m
		}
		if v := g.InputTokensPerSec(); v > 0 {
			rr.InputTokensPerSec = &v
		}
		out = append(out, rr)
	}
	return out
}

func imageRecords(groups []*ImageGroup) []runrecord.ImageRecord {
	out := make([]runrecord.ImageRecord, 0, len(groups))
	for _, g := range groups {
		out = append(out, runrecord.ImageRecord{Images: g.Images, Size: g.Size, Calls: g.Calls, Bytes: g.Bytes, TTFT: metricRecord(g.TTFT)})
	}
	return out
}

func conversationRecord(turns []*TurnGroup, jobs []*JobGroup, stages []JobStage, stageNote string) *runrecord.ConversationRecord {
	if len(turns) == 0 && len(jobs) == 0 {
		return nil
	}
	out := &runrecord.ConversationRecord{Jobs: jobRecords(jobs), Stages: jobStageRecords(stages), StageNote: stageNote}
	for _, g := range turns {
		out.Turns = append(out.Turns, runrecord.TurnRecord{Turn: g.Turn, Cache: g.Cache, Calls: g.Calls, TTFT: metricRecord(g.TTFT)})
	}
	return out
}

// jobRecords are job groups in the record: sums become means per job.
func jobRecords(jobs []*JobGroup) []runrecord.JobRecord {
	out := make([]runrecord.JobRecord, 0, len(jobs))
	for _, g := range jobs {
		n := float64(g.Jobs)
		mean := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / n }
		out = append(out, runrecord.JobRecord{Kind: g.Kind, Category: g.Category, Jobs: g.Jobs, Failed: g.Failed,
			Duration: metricRecord(g.Duration), ModelMean: mean(g.Model), ThinkMean: mean(g.Think), ToolMean: mean(g.Tool),
			TurnsMean: float64(g.Turns) / n, StepsMean: float64(g.Steps) / n, TokensOut: g.TokensOut})
	}
	return out
}

func jobStageRecords(stages []JobStage) []runrecord.JobStageRecord {
	var out []runrecord.JobStageRecord
	for i := range stages {
		s := &stages[i]
		out = append(out, runrecord.JobStageRecord{Concurrency: s.Concurrency, ByRate: s.ByRate, First: s.First, Last: s.Last,
			Jobs: jobRecords(s.Jobs)})
	}
	return out
}

func waveRecords(r *Run) []runrecord.WaveRecord {
	var out []runrecord.WaveRecord
	for _, w := range r.Waves() {
		wr := runrecord.WaveRecord{
			StartSeconds: w.Start.Sub(r.Timeline.Origin).Seconds(), EndSeconds: w.End.Sub(r.Timeline.Origin).Seconds(),
			Base: w.Base, Peak: w.Peak, BeforeTTFTP50: w.BeforeTTFTP50, PeakTTFTP50: w.PeakTTFTP50,
			RecoveryLimitMS: w.RecoveryLimitMS, Recovered: w.Recovered, ObservedAfter: w.ObservedAfter.Seconds(),
			Text: w.Describe(r.Timeline.Origin),
		}
		if w.Recovered {
			v := w.Recovery.Seconds()
			wr.RecoverySeconds = &v
		}
		out = append(out, wr)
	}
	return out
}

// routeRecords lists the routes when there is something to tell apart.
func routeRecords(r *Run) []runrecord.RouteRecord {
	keys, groups := r.Routes()
	if !routesToShow(keys) {
		return nil
	}
	out := make([]runrecord.RouteRecord, 0, len(keys))
	for _, k := range keys {
		g := groups[k]
		rr := runrecord.RouteRecord{
			RouteKey: k, Requests: g.Requests, Failures: g.Failures,
			TTFTP50: runrecord.FiniteOr0(q50(g.S(record.DistTTFT))), TTFTP95: runrecord.FiniteOr0(g.S(record.DistTTFT).Quantile(0.95)),
			E2EP50: runrecord.FiniteOr0(q50(g.S(record.DistE2E))), TokensPerSecP50: runrecord.FiniteOr0(q50(g.S(record.DistTokensPerSec))),
		}
		rr.RouteIntervals(g.S(record.DistTTFT), g.S(record.DistE2E), g.S(record.DistTokensPerSec))
		out = append(out, rr)
	}
	return out
}

// RenderOptions carry what the report cannot know by itself.
type RenderOptions struct {
	Title string
	// Meta is the run's metadata (k6 and module versions, options, seed,
	// dataset fingerprint, models, start time…); shown in the HTML and stored in the record.
	Meta map[string]any
	// Findings to show; nil means Diagnose(r).
	Findings []runrecord.Finding
	// Info is how the run was made; stored in the record.
	Info *runrecord.RunInfo
	// Server is the servers' own view (serverMetrics), shown beside the
	// client's figures and stored in the record (render_server.go).
	Server []servermetrics.View
	// Baseline is the record this run is compared with (Compare), when Render
	// is given no comparison of its own.
	Baseline *runrecord.Record
	// BaselineServer, when given, replaces the baseline record's server view
	// in the comparison (alone, the run is compared on the servers' figures only).
	BaselineServer []servermetrics.View
}

func clientRecords(r *Run) map[string]*runrecord.ClientRecord {
	if !r.PerClient() {
		return nil
	}
	out := map[string]*runrecord.ClientRecord{}
	for _, name := range r.Clients() {
		v := r.Client(name)
		cr := &runrecord.ClientRecord{Categories: map[string]*runrecord.CategoryRecord{}, Stages: stageRecords(v),
			StageNote: v.StageNote(), Waves: waveRecords(v)}
		for _, cat := range append(v.Categories(), runrecord.AllCategories) {
			cr.Categories[cat] = categoryRecordOf(v, cat)
		}
		out[runrecord.ClientLabel(name)] = cr
	}
	return out
}

func stageRecords(r *Run) []runrecord.StageRecord {
	var out []runrecord.StageRecord
	for _, st := range r.Stages() {
		sr := runrecord.StageRecord{
			Concurrency: st.Concurrency, ByRate: st.ByRate, Calls: st.Calls, SteadySeconds: st.Steady.Seconds(),
			TTFTP50: runrecord.FiniteOr0(q50(st.All.S(record.DistTTFT))), TTFTP95: runrecord.FiniteOr0(st.All.S(record.DistTTFT).Quantile(0.95)),
			TokensPerSecP50: runrecord.FiniteOr0(q50(st.All.S(record.DistTokensPerSec))),
			RequestsPerSec:  runrecord.FiniteOr0(st.RequestsPerSec), OutputTokensPerSec: runrecord.FiniteOr0(st.OutputTokensPerSec),
		}
		sr.StageIntervals(st.All.S(record.DistTTFT), st.All.S(record.DistTokensPerSec))
		out = append(out, sr)
	}
	return out
}
