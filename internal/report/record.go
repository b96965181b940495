package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/servermetrics"
)

// RecordFormat is the version of the run-record layout. Format 2 stores
// sketches in sketches-go's encoding; format 1 (the module's own sketch
// layout) is still read and converted. A reader refuses other versions rather
// than misread them.
const RecordFormat = 2

// Record is the JSON run record: what a later run loads as its baseline.
type Record struct {
	Format     int                        `json:"format"`
	Meta       map[string]any             `json:"meta,omitempty"` // k6/module versions, options, seed, dataset fingerprint… as given
	Start      time.Time                  `json:"start"`
	End        time.Time                  `json:"end"`
	Categories map[string]*CategoryRecord `json:"categories"` // every category and "all"
	Stages     []StageRecord              `json:"stages,omitempty"`
	StageNote  string                     `json:"stage_note,omitempty"` // why no stages could be compared
	Waves      []WaveRecord               `json:"waves,omitempty"`
	// With several clients: each client's own figures, stages and waves
	// (render_record.go), the routes, and the paired comparisons.
	Clients    map[string]*ClientRecord `json:"clients,omitempty"`
	Routes     []RouteRecord            `json:"routes,omitempty"`
	Paired     []PairedComparison       `json:"paired,omitempty"`
	Findings   []Finding                `json:"findings"`
	Comparison *Comparison              `json:"comparison,omitempty"`
	// Excluded says which calls were left out of every figure above and why.
	Excluded *Exclusions `json:"excluded,omitempty"`
	// Dispatch is what the test offered and did not send on time.
	Dispatch *Dispatch `json:"dispatch,omitempty"`
	// Capacity is a capacity search's answer (Capacity.search).
	Capacity *Capacity `json:"capacity,omitempty"`
	// Retrieval is the embed and rerank calls' section; Images is the chat
	// calls' TTFT by the images in their prompts (sections.go).
	Retrieval []RetrievalRecord `json:"retrieval,omitempty"`
	Images    []ImageRecord     `json:"images,omitempty"`
	// Conversations is the live conversations' section: TTFT by turn and
	// the jobs (conversations.go).
	Conversations *ConversationRecord `json:"conversations,omitempty"`
	// Run is how the run was made (load shape, data, clients, versions, segment).
	Run *RunInfo `json:"run,omitempty"`
	// Instances lists the records a merged record was made of.
	Instances []InstanceRecord `json:"instances,omitempty"`
	// Server is what the servers' own /metrics counted (serverMetrics);
	// a merged record keeps each endpoint once (servermetrics.Merge).
	Server []servermetrics.View `json:"server,omitempty"`

	source string // the file it was read from, for messages
	seed   uint64 // the collector's seed, for the comparison's bootstrap (0: read from a file)
}

// CategoryRecord summarises one category.
type CategoryRecord struct {
	Requests     uint64                   `json:"requests"`
	Failures     uint64                   `json:"failures"`
	Errors       map[string]uint64        `json:"errors,omitempty"`
	CacheHitRate *float64                 `json:"cache_hit_rate,omitempty"`
	CacheHits    uint64                   `json:"cache_hits"`
	CacheMisses  uint64                   `json:"cache_misses"`
	Stalls       uint64                   `json:"stalls"`
	OutputTokens int64                    `json:"output_tokens"`
	Metrics      map[string]*MetricRecord `json:"metrics"`
	Cost         *CostRecord              `json:"cost,omitempty"` // only when the client had prices
	// GapsUnsampled: gaps the gap-sample cap kept out of k6's llm_inter_token_gap.
	GapsUnsampled uint64 `json:"gaps_unsampled,omitempty"`
	// FinishOmitted: complete answers whose server named no finish reason.
	FinishOmitted uint64 `json:"finish_omitted,omitempty"`
	// Samples is a uniform random sample of successful calls (reservoir), per
	// metric name ("ttft", "e2e", "tpot"), in ms: the bootstrap resamples it.
	Samples     map[string][]float64 `json:"samples,omitempty"`
	SamplesSeen uint64               `json:"samples_seen,omitempty"`
}

// MetricRecord is one distribution: headline figures plus the full sketch.
type MetricRecord struct {
	Count  uint64  `json:"count"`
	Mean   float64 `json:"mean"`
	P50    float64 `json:"p50"`
	P95    float64 `json:"p95"`
	P99    float64 `json:"p99"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Sketch *Sketch `json:"sketch"`
}

// StageRecord is one load stage of the run.
type StageRecord struct {
	Concurrency        float64 `json:"concurrency"`       // VUs, or the arrival rate when by_rate
	ByRate             bool    `json:"by_rate,omitempty"` // the stage is an arrival rate (requests/s)
	Calls              uint64  `json:"calls"`
	SteadySeconds      float64 `json:"steady_seconds"`
	TTFTP50            float64 `json:"ttft_p50"`
	TTFTP95            float64 `json:"ttft_p95"`
	TokensPerSecP50    float64 `json:"tokens_per_sec_p50"`
	RequestsPerSec     float64 `json:"requests_per_sec"`
	OutputTokensPerSec float64 `json:"output_tokens_per_sec"`
}

func metricRecord(s *Sketch) *MetricRecord {
	return &MetricRecord{
		Count: s.Count(), Mean: s.Mean(), P50: s.Quantile(0.5), P95: s.Quantile(0.95), P99: s.Quantile(0.99),
		Min: s.Min, Max: s.Max, Sketch: s,
	}
}

func finiteOr0(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// NewRecord builds the record of a run.
func NewRecord(r *Run, findings []Finding, cmp *Comparison, meta map[string]any) *Record {
	if findings == nil {
		findings = []Finding{}
	}
	rec := &Record{
		Format: RecordFormat, Meta: meta, Start: r.First, End: r.Last,
		Categories: map[string]*CategoryRecord{}, Findings: findings, Comparison: cmp, seed: r.opt.Seed,
	}
	rec.Clients, rec.Routes, rec.Paired = clientRecords(r), routeRecords(r), r.Paired()
	if ex := r.Excluded; ex.Summary() != "" {
		rec.Excluded = &ex
	}
	for _, cat := range append(r.Categories(), AllCategories) {
		rec.Categories[cat] = categoryRecordOf(r, cat)
	}
	if !r.PerClient() { // with several clients, stages and waves are per client only
		rec.Stages, rec.StageNote, rec.Waves = stageRecords(r), r.StageNote(), waveRecords(r)
	}
	return rec
}

// categoryRecordOf is the record of a category of a run (or of one client's
// view of it), with the raw samples a later comparison resamples.
func categoryRecordOf(r *Run, cat string) *CategoryRecord {
	cr := categoryRecord(r.Category(cat))
	if cat != AllCategories && len(r.samples[cat]) > 0 {
		cr.Samples = map[string][]float64{}
		for _, m := range reservoirMetrics {
			if v := samplesOf(r.samples[cat], m); len(v) > 0 {
				cr.Samples[m.String()] = v
			}
		}
		cr.SamplesSeen = r.seen[cat]
	}
	return cr
}

// categoryRecord is the record of one group's figures.
func categoryRecord(g *Group) *CategoryRecord {
	cr := &CategoryRecord{
		Requests: g.Requests, Failures: g.Failures, Errors: g.Errors, Stalls: g.Stalls,
		CacheHits: g.CacheHit, CacheMisses: g.CacheMiss,
		OutputTokens: g.OutputTokens, Metrics: map[string]*MetricRecord{}, Cost: g.costRecord(),
		GapsUnsampled: g.GapsUnsampled, FinishOmitted: g.FinishOmitted,
	}
	if hr := g.CacheHitRate(); !math.IsNaN(hr) {
		cr.CacheHitRate = &hr
	}
	for m, s := range g.Sketches {
		if s.Count() > 0 {
			cr.Metrics[Metric(m).String()] = metricRecord(s)
		}
	}
	return cr
}

// MarshalRecord renders the run record as indented JSON.
func MarshalRecord(r *Run, findings []Finding, cmp *Comparison, meta map[string]any) ([]byte, error) {
	if r == nil {
		return nil, errors.New("report: no run to record")
	}
	return marshalRecord(r, findings, cmp, RenderOptions{Meta: meta})
}

func marshalRecord(r *Run, findings []Finding, cmp *Comparison, opt RenderOptions) ([]byte, error) {
	rec, err := runRecord(r, findings, cmp, opt)
	if err != nil {
		return nil, err
	}
	return encodeRecord(rec)
}

// runRecord is the record of a run as Render writes it: how it was made, the
// servers' view, and the comparison with opt.Baseline unless cmp is given.
func runRecord(r *Run, findings []Finding, cmp *Comparison, opt RenderOptions) (*Record, error) {
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
		cmp = Compare(rec, opt.Baseline)
	}
	rec.Comparison = cmp
	return rec, nil
}

func encodeRecord(rec *Record) ([]byte, error) {
	b, err := json.MarshalIndent(rec, "", " ")
	if err != nil {
		return nil, fmt.Errorf("report: encoding the run record: %w", err)
	}
	return b, nil
}

// LoadBaseline reads a run record written by MarshalRecord (or by an older
// version of this module, whose sketches it converts), checking it enough that
// a corrupt or foreign file gives an error, never a panic.
func LoadBaseline(data []byte) (*Record, error) { return ParseRecord("baseline", data) }

// ParseRecord is LoadBaseline with the file's name in every error.
func ParseRecord(name string, data []byte) (*Record, error) {
	var head struct {
		Format *int `json:"format"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("report: %s is not a JSON run record: %w", name, err)
	}
	if head.Format == nil {
		return nil, fmt.Errorf(`report: %s has no "format" field: not a run record`, name)
	}
	var rec *Record
	var err error
	switch *head.Format {
	case RecordFormat:
		rec = &Record{}
		err = json.Unmarshal(data, rec)
	case recordFormatV1:
		rec, err = parseRecordV1(data)
	default:
		return nil, fmt.Errorf("report: %s is a run record of format %d; this version reads formats %d and %d "+
			"(write it again with a matching version of xk6-llmstream)", name, *head.Format, recordFormatV1, RecordFormat)
	}
	if err != nil {
		return nil, fmt.Errorf("report: %s (record format %d): %w", name, *head.Format, err)
	}
	if err := rec.check(); err != nil {
		return nil, fmt.Errorf("report: %s: %w", name, err)
	}
	rec.Format = RecordFormat // converted, if it was older
	rec.source = name
	return rec, nil
}

func checkCategories(prefix string, cats map[string]*CategoryRecord) error {
	for cat, cr := range cats {
		if cr == nil {
			return fmt.Errorf("%scategory %q is null", prefix, cat)
		}
		for name, mr := range cr.Metrics {
			if mr == nil || mr.Sketch == nil {
				return fmt.Errorf("%s%s/%s has no sketch", prefix, cat, name)
			}
			if err := mr.Sketch.validate(); err != nil {
				return fmt.Errorf("%s%s/%s: %w", prefix, cat, name, err)
			}
		}
		for name, vs := range cr.Samples {
			for _, v := range vs {
				if math.IsNaN(v) || v < 0 {
					return fmt.Errorf("%s%s/%s has an invalid sample %v", prefix, cat, name, v)
				}
			}
		}
	}
	return nil
}

// check validates what JSON decoding cannot: every figure a report reads is there and sane.
func (rec *Record) check() error {
	if len(rec.Categories) == 0 {
		return errors.New("record has no categories (was the run empty?)")
	}
	if err := checkCategories("", rec.Categories); err != nil {
		return err
	}
	for name, cl := range rec.Clients {
		if cl == nil {
			return fmt.Errorf("client %q is null", name)
		}
		if err := checkCategories("client "+name+": ", cl.Categories); err != nil {
			return err
		}
	}
	return nil
}

// P95 is the baseline's 95th percentile of a duration metric ("ttft", "e2e",
// "tpot", "gap"…) for a category (or "all"); ok is false when the baseline
// has no such figure. The k6 module uses it for the live llm_regression rate.
func (r *Record) P95(category, metric string) (time.Duration, bool) {
	if r == nil {
		return 0, false
	}
	return p95Of(r.Categories, category, metric)
}

// ClientP95 is P95 for one client's calls when the record kept them apart
// (a run of several clients), else for the whole run.
func (r *Record) ClientP95(client, category, metric string) (time.Duration, bool) {
	if r == nil {
		return 0, false
	}
	if cr := r.Clients[clientLabel(client)]; cr != nil {
		return p95Of(cr.Categories, category, metric)
	}
	return p95Of(r.Categories, category, metric)
}

func p95Of(cats map[string]*CategoryRecord, category, metric string) (time.Duration, bool) {
	m, known := MetricByName(metric)
	cr := cats[category]
	if !known || !m.isDuration() || cr == nil {
		return 0, false
	}
	mr := cr.Metrics[metric]
	if mr == nil || mr.Count == 0 || math.IsNaN(mr.P95) {
		return 0, false
	}
	return time.Duration(mr.P95 * float64(time.Millisecond)), true
}
